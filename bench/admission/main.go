// Command admission sends AdmissionReviews to `readygate-cluster webhook` from C concurrent
// clients, each on its own kept-alive HTTPS connection as the API server holds them, and prints
// the latency of every review (client side: request written to answer read) as JSON.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
)

// The review: a Pod CREATE whose annotations ask for a wait and a startup probe, with the
// fields a real pod carries.
const review = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%d","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","namespace":"shop","object":{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-7d4b9c-","namespace":"shop","labels":{"app":"web","pod-template-hash":"7d4b9c"},"annotations":{"readygate.dev/wait-for":"postgres://db.shop.svc:5432 http://auth.shop.svc:8080/healthz","readygate.dev/wait-timeout":"2m","readygate.dev/startup-probe.proxy":"http://127.0.0.1:15021/healthz/ready"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c","uid":"5c1e","controller":true,"blockOwnerDeletion":true}]},"spec":{"initContainers":[{"name":"proxy","image":"envoyproxy/envoy:v1.31","restartPolicy":"Always","ports":[{"containerPort":15021}],"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}],"containers":[{"name":"app","image":"registry.example.com/app:1.0","command":["/app/server"],"env":[{"name":"DB","value":"postgres://db.shop.svc:5432"},{"name":"MODE","value":"production"}],"ports":[{"containerPort":8080}],"readinessProbe":{"httpGet":{"path":"/ready","port":8080}},"resources":{"requests":{"cpu":"250m","memory":"128Mi"},"limits":{"memory":"256Mi"}},"volumeMounts":[{"name":"kube-api-access","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}]}],"volumes":[{"name":"kube-api-access","projected":{"sources":[{"serviceAccountToken":{"path":"token","expirationSeconds":3607}}]}}],"serviceAccountName":"default","restartPolicy":"Always","terminationGracePeriodSeconds":30}},"oldObject":null,"dryRun":false}}`

func main() {
	url := flag.String("url", "", "https://127.0.0.1:PORT/mutate")
	ca := flag.String("ca", "", "the CA's PEM file")
	clients := flag.Int("clients", 50, "concurrent clients")
	each := flag.Int("each", 40, "reviews per client, after one to warm its connection")
	flag.Parse()
	pem, err := os.ReadFile(*ca)
	if err != nil {
		panic(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	var mu sync.Mutex
	var latencies []time.Duration
	failures := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := 0; c < *clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{
				TLSClientConfig:     &tls.Config{RootCAs: roots, ServerName: "localhost"},
				MaxIdleConnsPerHost: 1,
				ForceAttemptHTTP2:   false,
			}, Timeout: 10 * time.Second}
			send := func(n int) (time.Duration, bool) {
				body := fmt.Sprintf(review, n)
				began := time.Now()
				resp, err := client.Post(*url, "application/json", bytes.NewBufferString(body))
				if err != nil {
					return 0, false
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took := time.Since(began)
				var parsed struct {
					Response struct {
						Allowed bool   `json:"allowed"`
						Patch   string `json:"patch"`
					} `json:"response"`
				}
				ok := resp.StatusCode == 200 && json.Unmarshal(answer, &parsed) == nil &&
					parsed.Response.Allowed && parsed.Response.Patch != ""
				return took, ok
			}
			send(c) // the handshake, not measured
			<-start
			for i := 0; i < *each; i++ {
				took, ok := send(c*1000 + i)
				mu.Lock()
				if ok {
					latencies = append(latencies, took)
				} else {
					failures++
				}
				mu.Unlock()
			}
		}(c)
	}
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(began)
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	at := func(q float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	// The client's own CPU time (user + system): on a shared machine, what it leaves the webhook.
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	cpu := time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	out, _ := json.Marshal(map[string]any{
		"clients": *clients, "reviews": len(latencies), "failures": failures,
		"client_cpu_ms": cpu.Milliseconds(),
		"median_ms":     at(0.5), "p99_ms": at(0.99), "max_ms": at(1), "wall_s": wall.Seconds(),
	})
	fmt.Println(string(out))
}
