"""Users' API tokens: how bot authors authenticate to the Arena gRPC service."""
