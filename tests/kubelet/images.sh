# The images the kubelet tests run, sourced by run.sh: readygate's (images/build-image.sh),
# busybox-static with its applets, the stand-ins of tests/containers/standins/ and a pause
# image, built with podman in a private storage under $CLUSTER/podman and imported into the
# cluster's containerd; `provide_image` tags them with the names the manifests use. No registry.

TEST_REPO=localhost/readygate-test
PAUSE_IMAGE=$TEST_REPO/pause:latest
STANDINS="$ROOT/tests/containers/standins"

# podman with its own config and storage, never the machine's.
kpodman() {
  CONTAINERS_CONF="$CLUSTER/podman/containers.conf" \
    CONTAINERS_STORAGE_CONF="$CLUSTER/podman/storage.conf" \
    CONTAINERS_REGISTRIES_CONF="$CLUSTER/podman/registries.conf" podman "$@"
}

kctr() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }

podman_build() {
  kpodman build --quiet --pull=never --layers=false --tag "$2" "$1" >/dev/null
}

build_images() {
  local p="$CLUSTER/podman"
  mkdir -p "$p"
  cat >"$p/containers.conf" <<CONF
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$p/events.log"
tmp_dir = "$p/tmp"
CONF
  printf '[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n' \
    "$p/storage" "$p/run" >"$p/storage.conf"
  echo 'unqualified-search-registries = []' >"$p/registries.conf"

  # busybox-static and a link per applet: busybox:1.36, and the stand-ins' base.
  local base="$p/busybox" applet
  mkdir -p "$base/rootfs/bin" "$base/rootfs/tmp"
  chmod 1777 "$base/rootfs/tmp"
  cp /bin/busybox "$base/rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [[ $applet == busybox ]] || ln -s busybox "$base/rootfs/bin/$applet"
  done
  printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nCMD ["sh"]\n' \
    >"$base/Containerfile"
  podman_build "$base" "$TEST_REPO/busybox:base"

  # The pod sandbox's process: sleeps until told to stop.
  mkdir -p "$p/pause"
  printf '%s\n' "FROM $TEST_REPO/busybox:base" \
    "CMD [\"sh\", \"-c\", \"trap 'exit 0' TERM INT; while :; do sleep 3600 & wait \$!; done\"]" \
    >"$p/pause/Containerfile"
  podman_build "$p/pause" "$PAUSE_IMAGE"

  local folder images=("$TEST_REPO/busybox:base" "$PAUSE_IMAGE" "$TEST_REPO/readygate:latest")
  for folder in "$STANDINS"/*/; do
    folder="$(basename "$folder")"
    podman_build "$STANDINS/$folder" "$TEST_REPO/$folder:latest"
    images+=("$TEST_REPO/$folder:latest")
  done
  CONTAINERS_CONF="$p/containers.conf" CONTAINERS_STORAGE_CONF="$p/storage.conf" \
    CONTAINERS_REGISTRIES_CONF="$p/registries.conf" \
    "$ROOT/images/build-image.sh" "$TEST_REPO/readygate:latest" >/dev/null
  kpodman save --quiet --multi-image-archive --output "$p/images.tar" "${images[@]}"
}

import_images() {
  kctr images import --no-unpack=false "$CLUSTER/podman/images.tar" >/dev/null
}

# The image built here for REFERENCE (an image a manifest names), as tests/containers does.
local_image_for() {
  local repository="${1%:*}"
  [[ "$1" == *:*/* ]] && repository="$1"
  repository="${repository#docker.io/}"
  repository="${repository#library/}"
  case "$repository" in
    */readygate) echo "$TEST_REPO/readygate:latest" ;;
    busybox) echo "$TEST_REPO/busybox:base" ;;
    nginx | nginxinc/nginx-unprivileged) echo "$TEST_REPO/nginx:latest" ;;
    envoyproxy/envoy) echo "$TEST_REPO/envoy:latest" ;;
    postgres) echo "$TEST_REPO/postgres:latest" ;;
    redis) echo "$TEST_REPO/redis:latest" ;;
    registry.example.com/app) echo "$TEST_REPO/app:latest" ;;
    fluent/fluent-bit) echo "$TEST_REPO/fluent-bit:latest" ;;
    fluentd) echo "$TEST_REPO/fluentd:latest" ;;
    localhost/readygate-test/*) echo "$1" ;;
    *) return 1 ;;
  esac
}

# Makes REFERENCE resolve, in containerd, to the image built for it.
provide_image() {
  local reference="$1" local_ref full
  local_ref="$(local_image_for "$reference")" || {
    echo "kubelet tests: no stand-in image for $reference (tests/kubelet/images.sh)" >&2
    return 1
  }
  # The CRI names images fully: busybox:1.36 is docker.io/library/busybox:1.36.
  full="$reference"
  if [[ "$reference" != */* ]]; then
    full="docker.io/library/$reference"
  elif [[ "${reference%%/*}" != *[.:]* && "${reference%%/*}" != localhost ]]; then
    full="docker.io/$reference"
  fi
  [[ "$full" == "$local_ref" ]] && return 0
  # Once per name, one lane at a time: ctr's `tag --force` deletes then creates, so two lanes
  # tagging one name at once fail ("already exists"), and a re-tag could take the name from a
  # pod another lane is starting. containerd's root is this run's: a name there is ours.
  (
    flock 9
    local names
    names="$(kctr images ls -q)"
    grep -qxF "$full" <<<"$names" || kctr images tag "$local_ref" "$full" >/dev/null
  ) 9>"$CLUSTER/images.lock"
}
