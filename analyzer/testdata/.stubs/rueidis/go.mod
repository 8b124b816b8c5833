module github.com/redis/rueidis

go 1.26.0
