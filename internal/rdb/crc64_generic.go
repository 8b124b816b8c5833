//go:build !amd64 || purego

package rdb

const haveCLMUL = false

// crcBlocks leaves everything to the tables where there is no
// carry-less multiplication path.
func crcBlocks(crc uint64, p []byte) (uint64, []byte) { return crc, p }
