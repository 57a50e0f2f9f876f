// The bench's HTTPS webhook receiver. It runs outside the Node processes so that receiving does not
// compete with the load generator's event loop, and because in production the receiver is the
// customer's server, not part of the stack being measured.
//
// It checks every X-Service-Signature (HMAC-SHA256 of the body with the endpoint's secret) and
// reports each delivery on stdout as a tab-separated line:
//
//	D <host> <X-Service-Delivery> <unix µs when the body was complete> <data.name> <signature ok: 1|0> <body parsed: 1|0>
//
// Secrets arrive on stdin as "S <host> <secret>" lines; each is acknowledged with "A <host>".
// The first stdout line is "L <port>" once it listens.
package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

type payload struct {
	Data struct {
		Name string `json:"name"`
	} `json:"data"`
}

type reporter struct {
	mu  sync.Mutex
	out *bufio.Writer
}

func (r *reporter) line(format string, args ...any) {
	r.mu.Lock()
	fmt.Fprintf(r.out, format, args...)
	r.mu.Unlock()
}

func (r *reporter) flushEvery(interval time.Duration) {
	for range time.Tick(interval) {
		r.mu.Lock()
		_ = r.out.Flush()
		r.mu.Unlock()
	}
}

func main() {
	address := flag.String("address", "127.0.0.1", "address to listen on")
	certFile := flag.String("cert", "", "PEM certificate chain")
	keyFile := flag.String("key", "", "PEM private key")
	flag.Parse()

	certificate, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("loading the certificate: %v", err)
	}
	var secrets sync.Map
	out := &reporter{out: bufio.NewWriterSize(os.Stdout, 1<<16)}

	go func() {
		scanner := bufio.NewScanner(os.Stdin)
		for scanner.Scan() {
			fields := strings.Split(scanner.Text(), "\t")
			if len(fields) == 3 && fields[0] == "S" {
				secrets.Store(fields[1], []byte(fields[2]))
				out.line("A\t%s\n", fields[1])
			}
		}
		os.Exit(0) // stdin closed: the bench is done
	}()

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		receivedAt := time.Now().UnixMicro()
		host, _, splitErr := net.SplitHostPort(r.Host)
		if splitErr != nil {
			host = r.Host
		}
		signatureOK := "0"
		if secret, ok := secrets.Load(host); ok {
			mac := hmac.New(sha256.New, secret.([]byte))
			mac.Write(body)
			expected := "sha256=" + hex.EncodeToString(mac.Sum(nil))
			if hmac.Equal([]byte(expected), []byte(r.Header.Get("X-Service-Signature"))) {
				signatureOK = "1"
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
		parsed := "1"
		var decoded payload
		if json.Unmarshal(body, &decoded) != nil {
			parsed = "0"
		}
		name := strings.NewReplacer("\t", " ", "\n", " ").Replace(decoded.Data.Name)
		out.line("D\t%s\t%s\t%d\t%s\t%s\t%s\n", host, r.Header.Get("X-Service-Delivery"), receivedAt, name, signatureOK, parsed)
	})

	listener, err := net.Listen("tcp", net.JoinHostPort(*address, "0"))
	if err != nil {
		log.Fatalf("listening: %v", err)
	}
	server := &http.Server{
		Handler:     handler,
		TLSConfig:   &tls.Config{Certificates: []tls.Certificate{certificate}},
		IdleTimeout: 60 * time.Second,
		ErrorLog:    log.New(io.Discard, "", 0),
	}
	out.line("L\t%d\n", listener.Addr().(*net.TCPAddr).Port)
	go out.flushEvery(5 * time.Millisecond)
	log.Fatal(server.ServeTLS(listener, "", ""))
}
