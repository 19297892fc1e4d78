#!/usr/bin/env bash
# Builds gorender's release artifacts into dist/ with the Go toolchain alone
# (docs/release.md "Release artifacts"): for linux and darwin on amd64 and
# arm64, a static binary (CGO_ENABLED=0, -trimpath) with its version, commit
# and date stamped, in a tar.gz with LICENSE and README.md; a CycloneDX SBOM
# (JSON) per binary from the module graph (cyclonedx-gomod, pinned); SHA256SUMS
# over them; and images.sh, the two image variants' build lines.
#
#   bash scripts/release.sh              HEAD must be a clean checkout of a tag vX.Y.Z
#   bash scripts/release.sh --snapshot   any commit: version 0.0.0-SNAPSHOT-<short commit>
#
# Reproducible: SOURCE_DATE_EPOCH (default: the commit's date) is the stamped
# date and every archive entry's time, the build id is empty and paths are
# trimmed, so the same commit and Go version give the same bytes.
# DIST overrides the output directory; IMAGE the images' name.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
image=${IMAGE:-ghcr.io/gorender/gorender}
dist=${DIST:-$root/dist}

snapshot=false
case "${1:-}" in
"") ;;
--snapshot) snapshot=true ;;
*)
  echo "usage: $0 [--snapshot]" >&2
  exit 2
  ;;
esac

commit=$(git rev-parse HEAD)
if $snapshot; then
  version=0.0.0-SNAPSHOT-$(git rev-parse --short HEAD)
else
  tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null) || {
    echo "release: HEAD is not a tag v*; tag it, or use --snapshot" >&2
    exit 1
  }
  if [ -n "$(git status --porcelain)" ]; then
    echo "release: the work tree has changes; a release is built from a clean checkout of $tag" >&2
    exit 1
  fi
  version=${tag#v}
fi
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
export SOURCE_DATE_EPOCH=$epoch
date=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$epoch" +%Y-%m-%dT%H:%M:%SZ)

# The archives carry the licence; there is none to carry yet, which only a
# snapshot may skip.
docs=(README.md)
if [ -f LICENSE ]; then
  docs+=(LICENSE)
elif $snapshot; then
  echo "release: warning: no LICENSE file; the snapshot's archives have none" >&2
else
  echo "release: no LICENSE file: the archives must carry the project's licence" >&2
  exit 1
fi

sbom=$(bash scripts/install-go-tool.sh cyclonedx-gomod)

echo "release: gorender $version (commit $commit, $date) into $dist" >&2
rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# cyclonedx-gomod names the main module's version from git through go-git,
# which cannot open a linked worktree (`git worktree add`): there it reads a
# clone of HEAD (hard links: quick), so a snapshot's uncommitted go.mod changes are not in
# its SBOMs (the release check would then fail on a module it misses).
sbom_src=$root
if [ "$(git rev-parse --git-dir)" != "$(git rev-parse --git-common-dir)" ]; then
  git clone -q --no-checkout "$root" "$work/src"
  git -C "$work/src" checkout -q --detach "$commit"
  sbom_src=$work/src
fi

# The stamps are these -X values; -buildvcs=false keeps the environment's
# setting (and the tree's state) out of the binary, so builds compare equal.
ldflags="-s -w -buildid= -X main.version=$version -X main.commit=$commit -X main.date=$date"
for target in $targets; do
  os=${target%/*} arch=${target#*/}
  name=gorender_${version}_${os}_${arch}
  mkdir "$work/$name"
  start=$SECONDS
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags="$ldflags" \
    -o "$work/$name/gorender" ./cmd/gorender
  cp "${docs[@]}" "$work/$name/"
  chmod 0755 "$work/$name/gorender"
  (cd "$work/$name" && chmod 0644 "${docs[@]}")
  # The same bytes for the same inputs: sorted names, fixed owner and times,
  # no name or time in the gzip header.
  tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime="@$epoch" --format=ustar -cf - "$name" | gzip -9n >"$dist/$name.tar.gz"
  # The modules this target's build selects (GOOS/GOARCH are its build
  # constraints), with their licences as detected evidence.
  (cd "$sbom_src" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$sbom" app -json -licenses -noserial \
    -notimestamp -main cmd/gorender -output "$dist/$name.cdx.json" .) 2>"$work/sbom.log" || {
    cat "$work/sbom.log" >&2
    exit 1
  }
  echo "release: $name: $((SECONDS - start)) s" >&2
done

(cd "$dist" && sha256sum -- *.tar.gz *.cdx.json >SHA256SUMS)

# The two image variants (Dockerfile: the default static one, the last stage,
# and `node`), built from this commit for both Linux architectures; extra
# arguments go to both (the release workflow passes --push).
{
  echo '#!/usr/bin/env bash'
  echo "# gorender $version's images, built from the repository's root at commit $commit"
  echo '# (scripts/release.sh wrote this). Arguments are added to both builds, e.g. --push.'
  echo 'set -euo pipefail'
  for variant in static node; do
    tag=$image:$version target=""
    if [ "$variant" = node ]; then
      tag=$tag-node target=" --target node"
    fi
    echo "docker buildx build --platform linux/amd64,linux/arm64$target" \
      "--build-arg VERSION=$version --build-arg COMMIT=$commit --build-arg DATE=$date" \
      "--build-arg SOURCE_DATE_EPOCH=$epoch -t $tag \"\$@\" ."
  done
} >"$dist/images.sh"
chmod 0755 "$dist/images.sh"

ls -l "$dist" >&2
