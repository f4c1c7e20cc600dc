# Sourced by scripts/build-opentofu and scripts/build-providers: a cache of built tools outside
# the checkout, so a clean clone (CI's, a second working tree) does not build OpenTofu and the
# providers from Go source again. One directory per tool, version, pin and Go version; each
# binary is recorded with its sha256 when built and checked against it before every use, so a
# truncated or changed copy is rebuilt, never installed.
#   TAKOSUMI_TOOL_CACHE   where (default: ${XDG_CACHE_HOME:-$HOME/.cache}/takosumi-tools)

tool_cache_root() {
  echo "${TAKOSUMI_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/takosumi-tools}"
}

# tool_cache_dir <name> <pin...>: the entry for this build of <name>; the pins (versions, module
# hashes, flags) and the Go version make its key.
tool_cache_dir() {
  local name=$1; shift
  local key
  key=$(printf '%s\n' "$@" "$(go env GOVERSION)" | sha256sum | cut -c1-16)
  echo "$(tool_cache_root)/$name-$key"
}

# tool_cache_install <entry> <file> <dest>: copies the cached <file> to <dest> when it matches
# its recorded hash; fails (and installs nothing) otherwise.
tool_cache_install() {
  local entry=$1 file=$2 dest=$3
  [ -f "$entry/$file" ] && [ -f "$entry/$file.sha256" ] || return 1
  (cd "$entry" && sha256sum --status -c "$file.sha256") || {
    echo "tool cache: $entry/$file does not match its recorded sha256: rebuilding it" >&2
    return 1
  }
  mkdir -p "$(dirname "$dest")"
  cp -f "$entry/$file" "$dest.tmp"
  mv -f "$dest.tmp" "$dest"
}

# tool_cache_store <built file> <entry> <file>: keeps a built binary and its sha256 in <entry>.
tool_cache_store() {
  local built=$1 entry=$2 file=$3
  mkdir -p "$entry"
  cp -f "$built" "$entry/$file.tmp"
  mv -f "$entry/$file.tmp" "$entry/$file"
  (cd "$entry" && sha256sum "$file" > "$file.sha256.tmp" && mv -f "$file.sha256.tmp" "$file.sha256")
}
