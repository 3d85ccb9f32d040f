package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkConf reads a web server's configuration file (Apache HTTPD or nginx syntax) and the files
// it includes, as the server would at start, and returns for each one its directive lines
//
//	conf FILE: LINE
//
// and one line per file its directives load or include:
//
//	path conf:FILE PATH ok file|dir
//	path conf:FILE PATH missing
//
// The directives that name files are Apache's LoadFile, LoadModule, Include and IncludeOptional,
// and nginx's load_module and include. Relative paths are resolved against Apache's ServerRoot
// when the configuration sets one, otherwise against the folder of the first file (nginx's
// configuration prefix). An include pattern that matches nothing is reported missing under the
// pattern (IncludeOptional's too: the injection relies on what it includes).
func checkConf(file string, stat func(string) (os.FileInfo, error)) []string {
	c := &confReader{root: filepath.Dir(file), stat: stat, seen: map[string]bool{}}
	c.read(file)
	return c.out
}

type confReader struct {
	root string
	stat func(string) (os.FileInfo, error)
	seen map[string]bool
	out  []string
}

func (c *confReader) read(file string) {
	if c.seen[file] {
		return
	}
	c.seen[file] = true
	data, err := os.ReadFile(file)
	if err != nil {
		c.out = append(c.out, fmt.Sprintf("conf %s: unreadable: %v", file, err))
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c.out = append(c.out, fmt.Sprintf("conf %s: %s", file, line))
		fields := strings.Fields(strings.TrimSuffix(line, ";"))
		for i := range fields {
			fields[i] = strings.Trim(fields[i], `"'`)
		}
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "ServerRoot":
			c.root = fields[1]
		case "LoadFile":
			for _, p := range fields[1:] {
				c.report(file, c.abs(p))
			}
		case "LoadModule":
			if len(fields) > 2 {
				c.report(file, c.abs(fields[2]))
			}
		case "load_module":
			c.report(file, c.abs(fields[1]))
		case "Include", "IncludeOptional", "include":
			pattern := c.abs(fields[1])
			matches, _ := filepath.Glob(pattern)
			if len(matches) == 0 {
				c.out = append(c.out, fmt.Sprintf("path conf:%s %s missing", file, pattern))
			}
			for _, m := range matches {
				c.report(file, m)
				if info, err := c.stat(m); err == nil && !info.IsDir() {
					c.read(m)
				}
			}
		}
	}
}

func (c *confReader) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.root, p)
}

func (c *confReader) report(file, p string) {
	info, err := c.stat(p)
	switch {
	case err != nil:
		c.out = append(c.out, fmt.Sprintf("path conf:%s %s missing", file, p))
	case info.IsDir():
		c.out = append(c.out, fmt.Sprintf("path conf:%s %s ok dir", file, p))
	default:
		c.out = append(c.out, fmt.Sprintf("path conf:%s %s ok file", file, p))
	}
}
