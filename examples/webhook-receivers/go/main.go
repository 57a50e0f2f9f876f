// A minimal webhook receiver for the task workspace service: Go 1.22+, standard library only.
//
//	WEBHOOK_SECRET='the secret you registered' TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem PORT=8443 go run .
//
// It verifies BOTH signatures of every delivery before it parses the body: the contract's
// X-Service-Signature (sha256=<hex HMAC of the raw body>) and the Standard Webhooks
// webhook-signature (v1,<base64 HMAC of "id.timestamp.body">, with the timestamp at most 5 minutes
// off), answers 204 at once, skips events it has already seen, and prints one JSON line per
// accepted event on stdout (rejections go to stderr).
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	maxBodyBytes     = 1 << 20 // payloads are a few KiB; refuse anything absurd
	toleranceSeconds = 5 * 60
	rememberedIDs    = 100_000 // dedupe memory: the ids of the last 100 000 events (use your database in production)
)

var timestampPattern = regexp.MustCompile(`^[0-9]{1,12}$`)

func required(name string) string {
	value := os.Getenv(name)
	if value == "" {
		fmt.Fprintf(os.Stderr, "%s must be set (see README.md)\n", name)
		os.Exit(2)
	}
	return value
}

type receiver struct {
	// The key is the secret exactly as registered, as UTF-8 bytes (never base64-decoded, even "whsec_…").
	secret []byte
	mu     sync.Mutex
	seen   map[string]struct{}
	order  []string // ids in arrival order, to forget the oldest
}

func (r *receiver) mac(parts ...[]byte) []byte {
	h := hmac.New(sha256.New, r.secret)
	for _, part := range parts {
		h.Write(part)
	}
	return h.Sum(nil)
}

// problemOf says why the request is not authentic, or "" when both signatures verify.
func (r *receiver) problemOf(header http.Header, body []byte) string {
	// hmac.Equal compares in constant time.
	contract := []byte(header.Get("X-Service-Signature"))
	if !hmac.Equal(contract, []byte("sha256="+hex.EncodeToString(r.mac(body)))) {
		return "bad X-Service-Signature"
	}

	id, timestamp := header.Get("webhook-id"), header.Get("webhook-timestamp")
	if id == "" || !timestampPattern.MatchString(timestamp) {
		return "missing webhook-id or webhook-timestamp"
	}
	sent, _ := strconv.ParseInt(timestamp, 10, 64)
	age := time.Now().Unix() - sent
	if age > toleranceSeconds {
		return "webhook-timestamp too old"
	}
	if age < -toleranceSeconds {
		return "webhook-timestamp too new"
	}
	expected := []byte(base64.StdEncoding.EncodeToString(r.mac([]byte(id+"."+timestamp+"."), body)))
	// Several space-separated "v1,<base64>" entries (one per secret during a rotation): any may match.
	entries := strings.Split(header.Get("webhook-signature"), " ")
	for i, entry := range entries {
		if i == 16 {
			break
		}
		if signature, ok := strings.CutPrefix(entry, "v1,"); ok && hmac.Equal([]byte(signature), expected) {
			return ""
		}
	}
	return "bad webhook-signature"
}

// firstTime records the event id; false when it was already seen (a retry or redelivery).
func (r *receiver) firstTime(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[id]; ok {
		return false
	}
	r.seen[id] = struct{}{}
	r.order = append(r.order, id)
	if len(r.order) > rememberedIDs {
		delete(r.seen, r.order[0])
		r.order = r.order[1:]
	}
	return true
}

func reject(w http.ResponseWriter, status int, reason string) {
	line, _ := json.Marshal(map[string]any{"rejected": reason, "status": status})
	fmt.Fprintln(os.Stderr, string(line))
	http.Error(w, reason, status)
}

type event struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	CreatedAt string          `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

var stdout sync.Mutex

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		reject(w, http.StatusMethodNotAllowed, "POST only")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBodyBytes)) // the raw bytes: verify these
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			reject(w, http.StatusRequestEntityTooLarge, "body too large")
		} else {
			reject(w, http.StatusBadRequest, "could not read the body")
		}
		return
	}
	if problem := r.problemOf(req.Header, body); problem != "" {
		reject(w, http.StatusUnauthorized, problem)
		return
	}
	var received event
	if err := json.Unmarshal(body, &received); err != nil {
		reject(w, http.StatusBadRequest, "body is not JSON")
		return
	}
	if received.ID == "" || received.Event == "" {
		reject(w, http.StatusBadRequest, "not an event")
		return
	}
	w.WriteHeader(http.StatusNoContent) // answer first (the service waits at most 10 s), then work
	if flusher, ok := w.(http.Flusher); ok {
		flusher.Flush()
	}
	if !r.firstTime(received.ID) {
		return
	}
	line, _ := json.Marshal(received)
	stdout.Lock()
	fmt.Println(string(line))
	stdout.Unlock()
}

func main() {
	r := &receiver{secret: []byte(required("WEBHOOK_SECRET")), seen: map[string]struct{}{}}
	certFile, keyFile := required("TLS_CERT_FILE"), required("TLS_KEY_FILE")
	port, host := os.Getenv("PORT"), os.Getenv("HOST")
	if port == "" {
		port = "8443"
	}
	if number, err := strconv.Atoi(port); err != nil || number < 0 || number > 65535 {
		fmt.Fprintln(os.Stderr, "PORT must be a port number (0 picks a free one)")
		os.Exit(2)
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server := &http.Server{
		Handler:           r,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	fmt.Fprintf(os.Stderr, "listening on %s\n", listener.Addr())
	if err := server.ServeTLS(listener, certFile, keyFile); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
