module chessapi

go 1.26

require (
	github.com/aws/aws-lambda-go v1.55.1 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
