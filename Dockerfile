# syntax=docker/dockerfile:1
# check=experimental=all

# gorender's image: one static, cgo-free binary on distroless static, running
# as an unprivileged numeric user, with its bundle cache on a volume.
#
#   docker build --build-arg VERSION="$(git describe --tags --always)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" -t gorender .
#   docker run --rm -p 3800:3800 -e RENDERER_PASSWORD='a long random secret' gorender
#
# The node variant is the same binary on distroless nodejs, for
# RENDERER_JS_ENGINE=node (renders in Node.js processes gorender supervises;
# docs/node-engine.md), tagged <version>-node:
#
#   docker build --target node --build-arg VERSION=... -t gorender:VERSION-node .
#
# tools/dockercheck lints this file with BuildKit's Dockerfile linter and
# runs the build stage's `go build` RUN line as written (read from this file),
# so keep that RUN one `go build` command with its environment in front.
#
# A release's two build lines (both variants, both architectures, version,
# commit and date) are written by scripts/release.sh into dist/images.sh. An
# empty COMMIT or DATE reads "unknown": the context has no .git to take them from.

# build compiles gorender: static (CGO_ENABLED=0), -trimpath, stamped as scripts/release.sh stamps it.
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS TARGETARCH
ARG VERSION=dev COMMIT= DATE=
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w -buildid= -X main.version=$VERSION -X main.commit=$COMMIT -X main.date=$DATE" -o /out/gorender ./cmd/gorender
RUN mkdir -p /out/cache

# The same binary beside distroless's Node.js 20 (/nodejs/bin/node): the
# default image's twin (tools/dockercheck keeps their lines alike).
# node is the image for RENDERER_JS_ENGINE=node.
FROM gcr.io/distroless/nodejs20-debian12:nonroot AS node
ARG VERSION=dev COMMIT= DATE=
LABEL org.opencontainers.image.title="gorender" \
      org.opencontainers.image.description="Renders React for Rails: a drop-in replacement for the React on Rails Pro Node renderer (node engine)" \
      org.opencontainers.image.source="https://github.com/gorender/gorender" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$COMMIT" \
      org.opencontainers.image.created="$DATE"
COPY --from=build /out/gorender /usr/local/bin/gorender
COPY --from=build --chown=65532:65532 /out/cache /var/cache/gorender
ENV RENDERER_HOST=0.0.0.0 \
    RENDERER_PORT=3800 \
    RENDERER_SERVER_BUNDLE_CACHE_PATH=/var/cache/gorender \
    RENDERER_JS_ENGINE=node \
    RENDERER_NODE_PATH=/nodejs/bin/node
VOLUME ["/var/cache/gorender"]
USER 65532:65532
EXPOSE 3800
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/gorender", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/gorender"]
CMD ["serve"]

# The default image (the last stage: what a plain docker build makes).
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev COMMIT= DATE=
LABEL org.opencontainers.image.title="gorender" \
      org.opencontainers.image.description="Renders React for Rails: a drop-in replacement for the React on Rails Pro Node renderer" \
      org.opencontainers.image.source="https://github.com/gorender/gorender" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$COMMIT" \
      org.opencontainers.image.created="$DATE"
COPY --from=build /out/gorender /usr/local/bin/gorender
# The bundle cache (PROTOCOL.md §6.3 layout: <cache>/<id>/<id>.js and its
# companion files). A pre-seeded image copies a cache here, see docs/bundle-cache.md "Pre-seeded bundle cache".
COPY --from=build --chown=65532:65532 /out/cache /var/cache/gorender
ENV RENDERER_HOST=0.0.0.0 \
    RENDERER_PORT=3800 \
    RENDERER_SERVER_BUNDLE_CACHE_PATH=/var/cache/gorender
VOLUME ["/var/cache/gorender"]
USER 65532:65532
EXPOSE 3800
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/gorender", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/gorender"]
CMD ["serve"]
