module github.com/msgsvc/msgsvc/client

go 1.26
