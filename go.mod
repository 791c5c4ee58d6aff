module chessapi

go 1.26
