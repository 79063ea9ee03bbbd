// kubeprobe asks an HTTP endpoint the way the kubelet's httpGet prober does (Go's net/http,
// a fresh connection per probe, User-Agent kube-probe, a timeout per probe) and reports, as
// JSON, each probe's latency and status and its own CPU time: the client's share of a probe's
// cost in bench/serve.py. Usage: kubeprobe -url URL -n N [-c CONCURRENT] [-gap DURATION]
package main

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

func cpu() time.Duration {
	var usage syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

func main() {
	url := flag.String("url", "", "the endpoint")
	n := flag.Int("n", 100, "probes per client")
	c := flag.Int("c", 1, "clients at once")
	gap := flag.Duration("gap", 0, "pause between one client's probes")
	flag.Parse()
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	var mutex sync.Mutex
	latencies := []float64{}
	failed := 0
	errors := map[string]int{}
	before := cpu()
	var group sync.WaitGroup
	for i := 0; i < *c; i++ {
		group.Add(1)
		go func() {
			defer group.Done()
			for j := 0; j < *n; j++ {
				request, _ := http.NewRequest("GET", *url, nil)
				request.Header.Set("User-Agent", "kube-probe/1.31")
				started := time.Now()
				response, err := client.Do(request)
				ok := err == nil
				why := ""
				if !ok {
					why = err.Error()
				}
				if ok {
					io.Copy(io.Discard, io.LimitReader(response.Body, 10240))
					response.Body.Close()
					ok = response.StatusCode >= 200 && response.StatusCode < 400
					if !ok {
						why = response.Status
					}
				}
				took := time.Since(started).Seconds()
				mutex.Lock()
				latencies = append(latencies, took)
				if !ok {
					failed++
					errors[why]++
				}
				mutex.Unlock()
				time.Sleep(*gap)
			}
		}()
	}
	group.Wait()
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"latencies":   latencies,
		"failed":      failed,
		"errors":      errors,
		"cpu_seconds": (cpu() - before).Seconds(),
	})
}
