"""The septet.v1 wire contract as Python: stubs generated from protos/septet/v1/*.proto.

Regenerate with `python scripts/generate_protos.py`; never edit the `*_pb2*` files by hand.
"""
