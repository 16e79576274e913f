"""The Arena gRPC service (protos/septet/v1/arena.proto): a thin servicer over the platform's
services and selectors, an input-checking and an API-token interceptor, health and (where the
settings allow) reflection."""
