#!/bin/sh
# Generates the Go stubs from bot.proto and builds ./go-lowest, offline, with Debian's packages only
# (golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev
# golang-github-golang-protobuf-1-5-dev; see docs/bots.md). GOPATH mode: the stubs' import path "septet/v1" (bot.proto's
# go_package) is src/septet/v1 here, and gRPC and protobuf come from /usr/share/gocode.
set -eu
# septet names its copy of the protos in SEPTET_PROTOS (in the sandbox, and locally in a checkout);
# else keep a copy of bot.proto in protos/septet/v1/ of this folder.
PROTOS="${SEPTET_PROTOS:-protos}"
mkdir -p src
protoc -I "$PROTOS" --go_out=src --go-grpc_out=src septet/v1/bot.proto
GO111MODULE=off GOFLAGS= GOPATH="$PWD:/usr/share/gocode" GOCACHE="${TMPDIR:-/tmp}/go-lowest-cache" \
  go build -ldflags="-s -w" -o go-lowest .
