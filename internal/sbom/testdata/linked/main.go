// Command linked links one module of go.mod (go-cmp) for the sbom tests.
package main

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
)

func main() { fmt.Println(cmp.Diff(1, 2)) }
