module github.com/redis/rueidis/rueidiscompat

go 1.26.0

require github.com/redis/rueidis v1.0.0
