"""Reads a /metrics answer on stdin with prometheus_client's own parser (the Prometheus
project's Python client) and prints each family as one JSON line: name, type, help and its
samples (name, labels, value). A text the parser rejects fails with its message.
Usage: metrics_parser.py < EXPOSITION"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

for family in text_string_to_metric_families(sys.stdin.read()):
    samples = [[s.name, s.labels, s.value] for s in family.samples]
    print(json.dumps({"name": family.name, "type": family.type, "help": family.documentation, "samples": samples}))
