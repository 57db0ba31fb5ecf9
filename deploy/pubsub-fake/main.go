// pubsub-fake serves Google's in-memory Pub/Sub fake (cloud.google.com/go/pubsub/v2/pstest) on a
// loopback address until it is stopped, for local development and Hookbase's tests. Clients reach
// it like the real emulator: @google-cloud/pubsub with `apiEndpoint: '127.0.0.1:<port>'` (plain
// gRPC, no credentials). State is in memory only and lost when the process exits.
//
// Built and started by scripts/lib/pubsub.mjs; run by hand with
//
//	go run . -host 127.0.0.1 -port 8085
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"cloud.google.com/go/pubsub/v2/pstest"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8085, "TCP port to listen on")
	flag.Parse()
	if *port < 1 || *port > 65535 {
		fmt.Fprintf(os.Stderr, "pubsub-fake: -port must be 1..65535, got %d\n", *port)
		os.Exit(2)
	}
	address := net.JoinHostPort(*host, strconv.Itoa(*port))

	// pstest panics when it cannot listen; probing first turns that into a readable error.
	probe, err := net.Listen("tcp", address)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pubsub-fake: cannot listen on %s: %v\n", address, err)
		os.Exit(1)
	}
	probe.Close()

	server := pstest.NewServerWithAddress(address)
	// The line scripts/lib/pubsub.mjs waits for (besides the port answering).
	fmt.Printf("pubsub-fake listening on %s\n", server.Addr)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	received := <-signals
	fmt.Printf("pubsub-fake stopping (%v)\n", received)
	if err := server.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "pubsub-fake: close: %v\n", err)
		os.Exit(1)
	}
}
