// Command etcd is etcd's own server entry point, built from its Go module for the test clusters.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
