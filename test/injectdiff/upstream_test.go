package injectdiff

// upstreamFlags turn on every language upstream v0.140.0 can inject (Go and nginx are off by
// default there, as here) and multi-instrumentation (on by default; stated so the comparison does
// not hang on a default).
var upstreamFlags = []string{
	"--enable-java-instrumentation=true", "--enable-nodejs-instrumentation=true",
	"--enable-python-instrumentation=true", "--enable-dotnet-instrumentation=true",
	"--enable-go-instrumentation=true", "--enable-apache-httpd-instrumentation=true",
	"--enable-nginx-instrumentation=true", "--enable-multi-instrumentation=true",
}
