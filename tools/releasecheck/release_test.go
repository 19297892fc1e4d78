// Package releasecheck checks what scripts/release.sh builds (docs/release.md
// "Release artifacts"): every file SHA256SUMS names verifies; every target's
// archive holds the binary, README.md and LICENSE (when the repository has
// one), with fixed owners and times; each binary is a static build for its
// own OS and architecture with the version, commit and date stamped, and the
// one for this machine prints them (`gorender version`, /info of a live
// server); each SBOM is CycloneDX and names every module the binary links,
// at its version; images.sh builds both image variants of this commit.
//
// With RELEASE_DIST set it checks that directory (the release workflow's
// dist/); otherwise it builds a snapshot into a temporary one first.
package releasecheck

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorender/gorender/tools/internal/repo"
)

// targets are the platforms a release builds, as GOOS/GOARCH.
var targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// stamp is what a release's binaries must say of themselves.
type stamp struct{ version, commit, date string }

func TestRelease(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	dist := os.Getenv("RELEASE_DIST")
	if dist == "" {
		dist = t.TempDir()
		start := time.Now()
		build := exec.Command("bash", filepath.Join(root, "scripts", "release.sh"), "--snapshot")
		build.Env = append(os.Environ(), "DIST="+dist)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("scripts/release.sh --snapshot: %v\n%s", err, out)
		}
		t.Logf("scripts/release.sh --snapshot: %s", time.Since(start).Round(time.Second))
	}
	want := expectedStamp(t, root, dist)
	t.Logf("checking gorender %s (commit %s, %s) in %s", want.version, want.commit, want.date, dist)

	t.Run("SHA256SUMS", func(t *testing.T) { checkSums(t, dist) })
	t.Run("images.sh", func(t *testing.T) { checkImages(t, root, dist, want) })
	for _, target := range targets {
		goos, goarch, _ := strings.Cut(target, "/")
		t.Run(goos+"_"+goarch, func(t *testing.T) {
			t.Parallel()
			name := "gorender_" + want.version + "_" + goos + "_" + goarch
			binary := checkArchive(t, root, filepath.Join(dist, name+".tar.gz"), name, want)
			info := checkBinary(t, binary, goos, goarch, want)
			checkSBOM(t, filepath.Join(dist, name+".cdx.json"), info)
			if goos == runtime.GOOS && goarch == runtime.GOARCH {
				checkVersion(t, binary, want)
				checkInfo(t, binary, want)
			}
		})
	}
}

// expectedStamp: the commit checked out, its date (or SOURCE_DATE_EPOCH),
// and the version of the archives, which must be this commit's tag's or
// its snapshot's.
func expectedStamp(t *testing.T, root, dist string) stamp {
	t.Helper()
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	var s stamp
	var err error
	if s.commit, err = git("rev-parse", "HEAD"); err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct", "HEAD"); err != nil {
			t.Fatalf("git log: %v", err)
		}
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		t.Fatalf("SOURCE_DATE_EPOCH %q: %v", epoch, err)
	}
	s.date = time.Unix(sec, 0).UTC().Format(time.RFC3339)

	short, _ := git("rev-parse", "--short", "HEAD")
	allowed := []string{"0.0.0-SNAPSHOT-" + short}
	if tag, err := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD"); err == nil {
		allowed = append(allowed, strings.TrimPrefix(tag, "v"))
	}
	archives, _ := filepath.Glob(filepath.Join(dist, "gorender_*.tar.gz"))
	versions := map[string]bool{}
	re := regexp.MustCompile(`^gorender_(.+)_(linux|darwin)_(amd64|arm64)\.tar\.gz$`)
	for _, a := range archives {
		m := re.FindStringSubmatch(filepath.Base(a))
		if m == nil {
			t.Fatalf("archive %s is not named gorender_<version>_<os>_<arch>.tar.gz", filepath.Base(a))
		}
		versions[m[1]] = true
	}
	if len(versions) != 1 || len(archives) != len(targets) {
		t.Fatalf("%d archives of versions %v in %s, want %d of one version", len(archives), versions, dist, len(targets))
	}
	for v := range versions {
		s.version = v
	}
	if !slices.Contains(allowed, s.version) {
		t.Fatalf("the archives are of version %s, want one of %v (HEAD's snapshot or tag)", s.version, allowed)
	}
	return s
}

// checkSums: every line of SHA256SUMS verifies, and it names every archive
// and SBOM in dist.
func checkSums(t *testing.T, dist string) {
	f, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || strings.ContainsAny(name, `/\`) {
			t.Fatalf("SHA256SUMS line %q: want <sha256>  <file name>", sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Errorf("SHA256SUMS names %s: %v", name, err)
			continue
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
		listed[name] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	artifacts, _ := filepath.Glob(filepath.Join(dist, "*.tar.gz"))
	sboms, _ := filepath.Glob(filepath.Join(dist, "*.cdx.json"))
	for _, a := range append(artifacts, sboms...) {
		if !listed[filepath.Base(a)] {
			t.Errorf("SHA256SUMS does not name %s", filepath.Base(a))
		}
	}
	if len(listed) != 2*len(targets) {
		t.Errorf("SHA256SUMS names %d files, want %d (an archive and an SBOM per target)", len(listed), 2*len(targets))
	}
}

// checkArchive: the archive holds exactly name/ with the binary, README.md
// and LICENSE (when the repository has one: the snapshot may lack it),
// equal to the repository's, owned by root, dated SOURCE_DATE_EPOCH. It
// returns the binary's path, extracted.
func checkArchive(t *testing.T, root, archive, name string, want stamp) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := map[string]int64{name + "/": 0o755, name + "/gorender": 0o755, name + "/README.md": 0o644}
	if _, err := os.Stat(filepath.Join(root, "LICENSE")); err == nil {
		wantFiles[name+"/LICENSE"] = 0o644
	}
	wantTime, _ := time.Parse(time.RFC3339, want.date)
	binary := filepath.Join(t.TempDir(), "gorender")
	seen := map[string]bool{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		mode, ok := wantFiles[h.Name]
		if !ok {
			t.Errorf("%s holds %s, want only %v", filepath.Base(archive), h.Name, wantFiles)
			continue
		}
		seen[h.Name] = true
		if h.Mode&0o777 != mode || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(wantTime) {
			t.Errorf("%s: mode %o, owner %d:%d, time %s; want %o, 0:0, %s", h.Name, h.Mode&0o777, h.Uid, h.Gid, h.ModTime.UTC(), mode, wantTime)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		switch base := filepath.Base(h.Name); base {
		case "gorender":
			if err := os.WriteFile(binary, data, 0o755); err != nil {
				t.Fatal(err)
			}
		case "README.md", "LICENSE":
			if orig, err := os.ReadFile(filepath.Join(root, base)); err != nil || !bytes.Equal(data, orig) {
				t.Errorf("%s differs from the repository's %s (%v)", h.Name, base, err)
			}
		}
	}
	for n := range wantFiles {
		if !seen[n] {
			t.Errorf("%s has no %s", filepath.Base(archive), n)
		}
	}
	if !seen[name+"/gorender"] {
		t.FailNow()
	}
	return binary
}

// checkBinary: the executable format and CPU of its target, no dynamic
// linking, the build settings of a static -trimpath build, and the stamps
// in its data. It returns the binary's build information.
func checkBinary(t *testing.T, binary, goos, goarch string, want stamp) *buildinfo.BuildInfo {
	t.Helper()
	switch goos {
	case "linux":
		f, err := elf.Open(binary)
		if err != nil {
			t.Fatalf("not an ELF file: %v", err)
		}
		defer f.Close()
		machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != machine || f.Class != elf.ELFCLASS64 {
			t.Errorf("ELF machine %s class %s, want %s, 64-bit", f.Machine, f.Class, machine)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("the binary is dynamically linked (%s)", p.Type)
			}
		}
	case "darwin":
		f, err := macho.Open(binary)
		if err != nil {
			t.Fatalf("not a Mach-O file: %v", err)
		}
		defer f.Close()
		cpu := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != cpu || f.Type != macho.TypeExec {
			t.Errorf("Mach-O cpu %s type %d, want %s, an executable", f.Cpu, f.Type, cpu)
		}
	}

	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for k, v := range map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[k] != v {
			t.Errorf("build setting %s=%q, want %q", k, settings[k], v)
		}
	}
	if info.Path != repo.MainModule+"/cmd/gorender" {
		t.Errorf("built %s, want %s/cmd/gorender", info.Path, repo.MainModule)
	}
	// -X stamps are string data: a binary this machine cannot run is
	// checked to hold them.
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{want.version, want.commit, want.date} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("the binary does not hold the stamp %q", s)
		}
	}
	return info
}

// checkSBOM: a CycloneDX JSON document of gorender's module that names
// every module the binary links, at the version it links, with goja and
// sonic among them.
func checkSBOM(t *testing.T, path string, info *buildinfo.BuildInfo) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat   string `json:"bomFormat"`
		SpecVersion string `json:"specVersion"`
		Metadata    struct {
			Component struct{ Name string } `json:"component"`
		} `json:"metadata"`
		Components []struct {
			Name, Version, Purl string
		} `json:"components"`
		Dependencies []struct {
			Ref       string   `json:"ref"`
			DependsOn []string `json:"dependsOn"`
		} `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion == "" {
		t.Errorf("bomFormat %q specVersion %q, want CycloneDX and a version", bom.BOMFormat, bom.SpecVersion)
	}
	if bom.Metadata.Component.Name != repo.MainModule {
		t.Errorf("the SBOM describes %q, want %s", bom.Metadata.Component.Name, repo.MainModule)
	}
	if len(bom.Dependencies) == 0 {
		t.Error("the SBOM has no dependency graph")
	}
	versions := map[string]string{}
	for _, c := range bom.Components {
		if !strings.HasPrefix(c.Purl, "pkg:golang/") {
			t.Errorf("component %s has purl %q, want pkg:golang/...", c.Name, c.Purl)
		}
		versions[c.Name] = c.Version
	}
	linked := map[string]bool{}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		linked[dep.Path] = true
		if v, ok := versions[dep.Path]; !ok || v != dep.Version {
			t.Errorf("the binary links %s %s; the SBOM says %q", dep.Path, dep.Version, v)
		}
	}
	for _, m := range []string{"github.com/dop251/goja", "github.com/bytedance/sonic", "modernc.org/quickjs"} {
		if !linked[m] || versions[m] == "" {
			t.Errorf("%s: linked %v, in the SBOM at %q; want both", m, linked[m], versions[m])
		}
	}
	t.Logf("%s: %d components, the binary links %d modules", filepath.Base(path), len(bom.Components), len(info.Deps))
}

// checkVersion: `gorender version` prints the stamps.
func checkVersion(t *testing.T, binary string, want stamp) {
	t.Helper()
	line := "gorender " + want.version + " (commit " + want.commit + ", built " + want.date + ")\n"
	out, err := exec.Command(binary, "version").Output()
	if err != nil || string(out) != line {
		t.Errorf("gorender version: %q, %v; want %q", out, err, line)
	}
}

// checkInfo: a live server of the binary reports the stamps on /info.
func checkInfo(t *testing.T, binary string, want stamp) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "gorender.log")
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	server := exec.Command(binary, "serve")
	server.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"RENDERER_HOST=127.0.0.1",
		"RENDERER_PORT=0", // the start-up log names the port the kernel chose
		"RENDERER_JS_ENGINE=goja",
		"RENDERER_SERVER_BUNDLE_CACHE_PATH=" + t.TempDir(),
		"RENDERER_PASSWORD=" + rand.Text(),
	}
	server.Stdout, server.Stderr = log, log
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	defer func() {
		server.Process.Kill()
		<-exited
	}()
	logs := func() string { b, _ := os.ReadFile(logFile); return string(b) }

	addr := ""
	for deadline := time.Now().Add(30 * time.Second); addr == ""; {
		for _, line := range strings.Split(logs(), "\n") {
			var entry struct{ Msg, Addr, Version, Commit string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "gorender listening" {
				addr = entry.Addr
				if entry.Version != want.version || entry.Commit != want.commit {
					t.Errorf("start-up log: version %q commit %q, want %q and %q", entry.Version, entry.Commit, want.version, want.commit)
				}
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("gorender exited before listening (%v):\n%s", err, logs())
		default:
		}
		if addr == "" && time.Now().After(deadline) {
			t.Fatalf("gorender does not listen after 30s:\n%s", logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatalf("listening address %q: %v", addr, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/info", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/info: %s, %v", resp.Status, err)
	}
	for k, v := range map[string]string{"renderer_version": want.version, "commit": want.commit, "build_date": want.date} {
		if info[k] != v {
			t.Errorf("/info %s = %q, want %q", k, info[k], v)
		}
	}
}

// checkImages: images.sh is a shell script building the default (static)
// image and the Dockerfile's node stage, both stamped with this release.
func checkImages(t *testing.T, root, dist string, want stamp) {
	path := filepath.Join(dist, "images.sh")
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n images.sh: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^FROM \S+ AS node$`).Match(dockerfile) {
		t.Fatal("the Dockerfile has no stage named node")
	}
	stamps := "--build-arg VERSION=" + want.version + " --build-arg COMMIT=" + want.commit + " --build-arg DATE=" + want.date
	variants := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "docker buildx build ") {
			continue
		}
		if !strings.Contains(line, stamps) || !strings.Contains(line, "--platform linux/amd64,linux/arm64") || !strings.HasSuffix(line, ` "$@" .`) {
			t.Errorf("image build line %q: want both Linux platforms, %q and the extra arguments", line, stamps)
		}
		tag := regexp.MustCompile(` -t (\S+)`).FindStringSubmatch(line)
		switch {
		case tag == nil:
			t.Errorf("image build line %q has no -t", line)
		case strings.Contains(line, " --target node ") && strings.HasSuffix(tag[1], ":"+want.version+"-node"):
			variants["node"] = true
		case !strings.Contains(line, "--target") && strings.HasSuffix(tag[1], ":"+want.version):
			variants["static"] = true
		default:
			t.Errorf("image build line %q: neither the default image tagged :%s nor --target node tagged :%s-node", line, want.version, want.version)
		}
	}
	if !variants["static"] || !variants["node"] {
		t.Errorf("images.sh builds %v, want the static and node variants", variants)
	}
}
