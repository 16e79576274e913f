"""Where bot archives and replays are kept: Django storage backends that every process can reach.

The embedded default is the local data folder (`SEPTET_ARCHIVES_DIR`, `SEPTET_REPLAYS_DIR`); a
platform whose workers run on other machines keeps them in its database instead
(`SEPTET_STORAGE=database`) or in an S3 bucket (`SEPTET_STORAGE=s3`, the `s3` extra), so the network
is all the machines share. See `stores`.
"""
