# The hardened HTTP/2 front (docs/service.md): Debian 12's nginx (with the CVE-2023-44487 backport)
# and deploy/nginx/. Runs beside shardcheckd in its network namespace (compose: network_mode
# service:shardcheckd; Kubernetes: a container of the same pod) and passes gRPC to the daemon on
# 127.0.0.1:50052.
#   docker build -f deploy/front.Dockerfile -t shardcheckd-front .
FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx \
 && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/*
COPY deploy/nginx/nginx.conf /etc/nginx/nginx.conf
COPY deploy/nginx/shardcheckd-front.conf /etc/nginx/conf.d/shardcheckd-front.conf
COPY deploy/nginx/shardcheckd/ /etc/nginx/shardcheckd/
USER 65534:65534
EXPOSE 50051
ENTRYPOINT ["/usr/sbin/nginx", "-e", "stderr", "-g", "daemon off;"]
STOPSIGNAL SIGQUIT
