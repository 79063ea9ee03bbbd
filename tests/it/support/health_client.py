"""A real gRPC client for the serve tests: grpcio's health stub asks ADDR about SERVICE with
METHOD (Check, or Watch for its first answer) and prints the ServingStatus name, or the failed
call's status code name. Usage: health_client.py ADDR SERVICE METHOD"""
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

address, service, method = sys.argv[1:4]
with grpc.insecure_channel(address) as channel:
    stub = health_pb2_grpc.HealthStub(channel)
    request = health_pb2.HealthCheckRequest(service=service)
    try:
        if method == "Watch":
            answer = next(stub.Watch(request, timeout=10))
        else:
            answer = stub.Check(request, timeout=10)
        print(health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status))
    except grpc.RpcError as error:
        print(error.code().name)
