package client_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientDir is the client module's folder in this tree.
func clientDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "client"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// goCmd runs the go command in dir outside this tree's module, as a
// customer's machine would: no workspace, no flags inherited from CI.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS="}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// The client imports the standard library only and its go.mod requires
// nothing, so that a program that imports it gets nothing else with it.
func TestStandardLibraryOnly(t *testing.T) {
	dir := clientDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s", filepath.Base(f), path)
			}
		}
	}
	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(goCmd(t, dir, nil, "mod", "edit", "-json")), &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != "github.com/msgsvc/msgsvc/client" || len(mod.Require) != 0 {
		t.Errorf("client/go.mod: module %q requires %v; want github.com/msgsvc/msgsvc/client requiring nothing", mod.Module.Path, mod.Require)
	}
}

// A program in a module of its own gets the client the way a customer does,
// with `go get`: the go command resolves the import path through a module
// proxy (here one laid out on disk from this tree, in the proxy protocol's
// own layout), downloads and verifies the module, and builds. No clone, no
// replace directive, no go mod tidy, and nothing else is downloaded.
func TestGoGetFromAnotherModule(t *testing.T) {
	const mod, version = "github.com/msgsvc/msgsvc/client", "v1.0.0"
	proxy := t.TempDir()
	at := filepath.Join(proxy, filepath.FromSlash(mod), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(clientDir(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("list", []byte(version+"\n"))
	write(version+".info", []byte(`{"Version":"`+version+`","Time":"2026-11-28T00:00:00Z"}`))
	write(version+".mod", goMod)
	write(version+".zip", moduleZip(t, clientDir(t), mod+"@"+version))

	shop := t.TempDir()
	if err := os.WriteFile(filepath.Join(shop, "main.go"), []byte("package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/msgsvc/msgsvc/client\"\n)\n\nfunc main() { fmt.Println(client.Final(client.StatusDelivered)) }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOPROXY=file://" + filepath.ToSlash(proxy), "GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GOFLAGS=-modcacherw",
		"GOMODCACHE=" + t.TempDir()}
	goCmd(t, shop, env, "mod", "init", "example.com/shop")
	goCmd(t, shop, env, "get", mod+"@"+version)
	if out := goCmd(t, shop, env, "run", "."); strings.TrimSpace(out) != "true" {
		t.Fatalf("the program printed %q, want true", out)
	}
	sum, err := os.ReadFile(filepath.Join(shop, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(sum)), "\n") {
		if !strings.HasPrefix(line, mod+" ") {
			t.Errorf("go get brought in more than the client: %s", line)
		}
	}
}

// moduleZip packs the module's files (not its tests' node, nothing but the
// module itself) as the proxy protocol serves them: every path prefixed
// with module@version.
func moduleZip(t *testing.T, dir, prefix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The client module's own tests and runnable examples run against this
// package's node (TestMain put its address and keys in the environment),
// so that `go test ./...` at the top of the tree covers the client too.
func TestClientModule(t *testing.T) {
	out := goCmd(t, clientDir(t), nil, "test", "-count=1", "-v", "./...")
	for _, want := range []string{"--- PASS: Example ", "--- PASS: ExampleVerifyWebhook"} {
		if !strings.Contains(out, want) {
			t.Errorf("the client's examples did not run against the node (no %q):\n%s", want, out)
		}
	}
}
