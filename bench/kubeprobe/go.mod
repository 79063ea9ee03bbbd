module readygate/bench/kubeprobe

go 1.21
