// go-lowest: a Septet bot in Go that always answers the first legal action (the engine's order),
// on the unary calls of septet.v1.Bot, with the standard health service. Stubs come from
// bot.proto in the build step (build.sh); Debian's Go packages are all it needs.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	pb "septet/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

type bot struct {
	pb.UnimplementedBotServer // Play answers UNIMPLEMENTED: the referee then uses the unary calls
}

func (bot) StartMatch(context.Context, *pb.StartMatchRequest) (*pb.StartMatchResponse, error) {
	return &pb.StartMatchResponse{}, nil
}

func (bot) Decide(_ context.Context, request *pb.DecideRequest) (*pb.DecideResponse, error) {
	// Every request carries the whole information state; index 0 is always legal.
	return &pb.DecideResponse{Choice: &pb.DecideResponse_Index{Index: 0}}, nil
}

func (bot) EndMatch(context.Context, *pb.EndMatchRequest) (*pb.EndMatchResponse, error) {
	return &pb.EndMatchResponse{}, nil
}

// listen serves on the address the referee gives: "unix:/path" or "host:port".
func listen(address string) (net.Listener, error) {
	if path := strings.TrimPrefix(address, "unix:"); path != address {
		return net.Listen("unix", path)
	}
	return net.Listen("tcp", address)
}

func main() {
	address := flag.String("address", os.Getenv("SEPTET_BOT_ADDRESS"), "where to serve")
	flag.Parse()
	listener, err := listen(*address)
	if err != nil {
		log.Fatalf("cannot listen on %s: %v", *address, err)
	}
	server := grpc.NewServer()
	pb.RegisterBotServer(server, bot{})
	healthServer := health.NewServer() // "" is SERVING from the start
	healthServer.SetServingStatus("septet.v1.Bot", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(server, healthServer)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() { <-stop; server.Stop() }()
	log.Printf("go-lowest serving on %s", *address)
	if err := server.Serve(listener); err != nil {
		log.Fatal(err)
	}
}
