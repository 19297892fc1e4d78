package chartcheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// object is one rendered document, decoded.
type object struct {
	source string // helm's "# Source:" line, for messages
	obj    runtime.Object
}

// strictDecoder decodes YAML into the typed objects of client-go's scheme and
// prometheus-operator's monitoring/v1, failing on unknown or duplicate fields.
var strictDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(monitoringv1.AddToScheme(s))
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}()

// decodeAll splits a multi-document YAML stream and strictly decodes each
// non-empty document.
func decodeAll(manifests string) ([]object, error) {
	reader := yaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifests)))
	var objects []object
	var errs []error
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		source, empty := describe(doc)
		if empty {
			continue
		}
		obj, _, err := strictDecoder.Decode(doc, nil, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", source, err))
			continue
		}
		objects = append(objects, object{source: source, obj: obj})
	}
	return objects, errors.Join(errs...)
}

// describe returns a document's "# Source:" path and whether it holds
// nothing but comments and blank lines.
func describe(doc []byte) (source string, empty bool) {
	empty = true
	for _, line := range bytes.Split(doc, []byte("\n")) {
		text := strings.TrimSpace(string(line))
		if rest, ok := strings.CutPrefix(text, "# Source: "); ok && source == "" {
			source = rest
		}
		if text != "" && text != "---" && !strings.HasPrefix(text, "#") {
			empty = false
		}
	}
	if source == "" {
		source = "document"
	}
	return source, empty
}

// TestStrictDecoding decodes every rendered document of every variant into
// its Kubernetes API type; unknown kinds, unknown fields, duplicate fields and
// wrong types fail.
func TestStrictDecoding(t *testing.T) {
	vs := variants(t)
	for _, name := range sortedNames(vs) {
		t.Run(name, func(t *testing.T) {
			objects, err := decodeAll(renderVariant(t, vs[name]))
			if err != nil {
				t.Fatal(err)
			}
			if len(objects) == 0 {
				t.Fatal("rendered no objects")
			}
		})
	}
}

// TestStrictDecoderRejects makes sure the decoder is strict: a silently
// lenient decoder would let every typo through.
func TestStrictDecoderRejects(t *testing.T) {
	cases := map[string]string{
		"unknown field": `apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec: {replica: 1}
`,
		"duplicate field": `apiVersion: v1
kind: Service
metadata: {name: x}
spec:
  type: ClusterIP
  type: NodePort
`,
		"wrong type": `apiVersion: v1
kind: Service
metadata: {name: x}
spec: {ports: [{port: "eighty"}]}
`,
		"unknown ServiceMonitor field": `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: x}
spec: {endpoints: [{port: http, intervall: 30s}], selector: {}}
`,
		"unknown kind": `apiVersion: v1
kind: Servise
metadata: {name: x}
`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeAll(doc); err == nil {
				t.Errorf("decoded without error:\n%s", doc)
			}
		})
	}
}
