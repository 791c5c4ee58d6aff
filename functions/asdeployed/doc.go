// Package asdeployed holds the as-deployed tests of the three Lambda
// functions: it builds their `bootstrap` binaries as the Makefile does, runs
// each under the AWS Lambda Runtime Interface Emulator (infra/rie) with the
// environment the SAM template gives them, pointed at moto_server (DynamoDB
// and EventBridge Scheduler) and dynalite, and invokes them one at a time
// with the files in events/. It has no code outside its tests.
//
//	go test ./functions/asdeployed                     # the as-deployed test
//	go test -run '^$' -bench . -benchtime 50x ./functions/asdeployed   # warm move latency
package asdeployed
