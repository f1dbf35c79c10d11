"""Message classes for shardcheck.v1, grpc.health.v1 and grpc.reflection, built at run time from the
FileDescriptorSet protoc wrote during the build (build/gen/descriptors.pb). No generated stubs: Debian 12
has no usable grpcio-tools, and this keeps the client independent of the daemon's C code."""
import os

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

SVC = "shardcheck.v1.ShardCheck"


class Proto:
    def __init__(self, fds_path):
        with open(fds_path, "rb") as f:
            self.fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        self.pool = descriptor_pool.DescriptorPool()
        for fd in self.fds.file:
            self.pool.Add(fd)
        self.factory = message_factory.MessageFactory(self.pool)

    def msg(self, full_name):
        return self.factory.GetPrototype(self.pool.FindMessageTypeByName(full_name))

    def enum(self, full_name, value_name):
        return self.pool.FindEnumTypeByName(full_name).values_by_name[value_name].number


def unary(channel, path, req_cls, resp_cls):
    return channel.unary_unary(path, request_serializer=req_cls.SerializeToString,
                               response_deserializer=resp_cls.FromString)


class Client:
    """The daemon's methods as generic gRPC calls."""

    def __init__(self, proto, target, max_msg=256 << 20):
        self.p = proto
        self.target = target
        self.channel = grpc.insecure_channel(target, options=[
            ("grpc.max_receive_message_length", max_msg),
            ("grpc.max_send_message_length", max_msg),
        ])
        p = proto
        self.CheckRequest = p.msg("shardcheck.v1.CheckRequest")
        self.CheckResponse = p.msg("shardcheck.v1.CheckResponse")
        self.CheckChunk = p.msg("shardcheck.v1.CheckChunk")
        self.check = unary(self.channel, f"/{SVC}/Check", self.CheckRequest, self.CheckResponse)
        self.check_stream = self.channel.stream_unary(
            f"/{SVC}/CheckStream", request_serializer=self.CheckChunk.SerializeToString,
            response_deserializer=self.CheckResponse.FromString)
        self.list_rules = unary(self.channel, f"/{SVC}/ListRules", p.msg("shardcheck.v1.ListRulesRequest"),
                                p.msg("shardcheck.v1.ListRulesResponse"))
        self.ExplainRequest = p.msg("shardcheck.v1.ExplainRequest")
        self.explain = unary(self.channel, f"/{SVC}/Explain", self.ExplainRequest,
                             p.msg("shardcheck.v1.ExplainResponse"))
        self.capabilities = unary(self.channel, f"/{SVC}/GetCapabilities",
                                  p.msg("shardcheck.v1.GetCapabilitiesRequest"), p.msg("shardcheck.v1.Capabilities"))
        self.PropagateRequest = p.msg("shardcheck.v1.PropagateRequest")
        self.propagate = unary(self.channel, f"/{SVC}/Propagate", self.PropagateRequest,
                               p.msg("shardcheck.v1.PropagateResponse"))
        self.HealthCheckRequest = p.msg("grpc.health.v1.HealthCheckRequest")
        self.HealthCheckResponse = p.msg("grpc.health.v1.HealthCheckResponse")
        self.health = unary(self.channel, "/grpc.health.v1.Health/Check", self.HealthCheckRequest,
                            self.HealthCheckResponse)
        self.health_watch = self.channel.unary_stream(
            "/grpc.health.v1.Health/Watch", request_serializer=self.HealthCheckRequest.SerializeToString,
            response_deserializer=self.HealthCheckResponse.FromString)
        self.raw = lambda path: self.channel.unary_unary(path)  # bytes in, bytes out

    def reflection(self, version):
        req = self.p.msg(f"grpc.reflection.{version}.ServerReflectionRequest")
        resp = self.p.msg(f"grpc.reflection.{version}.ServerReflectionResponse")
        call = self.channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
            request_serializer=req.SerializeToString, response_deserializer=resp.FromString)
        return req, call

    def close(self):
        self.channel.close()


def default_fds():
    build = os.environ.get("BUILD", "build")
    return os.path.join(build, "gen", "descriptors.pb")
