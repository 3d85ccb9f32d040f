// Package instrumentation is auto-instrumentation of pods, as pure functions: which languages a
// pod asks for (the instrumentation.opentelemetry.io/inject-<language> annotations on the pod or
// its namespace), and the record the pod webhook leaves on a pod it instrumented, which the
// catch-up controller reads to find workloads whose pods missed their injection.
package instrumentation
