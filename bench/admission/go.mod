module readygate.dev/bench/admission

go 1.21
