// Command deploy-check checks Hookbase's deployment files offline, without a cluster or Docker.
//
//	deploy-check manifests < rendered.yaml   (the output of `helm template`)
//	deploy-check compose docker-compose.yml
//
// `manifests` decodes every rendered manifest strictly against the Kubernetes API types: an
// unknown field, a duplicate field, a wrong type or an unknown kind fails it. `compose` validates
// a Compose file against the Compose Specification's JSON schema (the one compose-go ships).
//
// Kinds of client-go's scheme are decoded by its strict deserializer. The one custom resource the
// chart renders, the Prometheus Operator's ServiceMonitor, is not in that scheme and its Go types
// live in a large module of their own: it is decoded strictly into the small local type below,
// which has the fields of monitoring.coreos.com/v1 that the chart may set, so a misspelt or
// misplaced field still fails.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/compose-spec/compose-go/v2/schema"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// ServiceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the chart renders.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

type ServiceMonitorSpec struct {
	JobLabel          string                `json:"jobLabel,omitempty"`
	Selector          metav1.LabelSelector  `json:"selector"`
	NamespaceSelector *NamespaceSelector    `json:"namespaceSelector,omitempty"`
	Endpoints         []ServiceMonitorPoint `json:"endpoints"`
}

type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

type ServiceMonitorPoint struct {
	Port          string `json:"port,omitempty"`
	Path          string `json:"path,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Interval      string `json:"interval,omitempty"`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "compose" {
		if err := checkCompose(os.Args[2]); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[2], err)
			os.Exit(1)
		}
		fmt.Printf("%s follows the Compose Specification\n", os.Args[2])
		return
	}
	if len(os.Args) != 2 || os.Args[1] != "manifests" {
		fmt.Fprintln(os.Stderr, "usage: deploy-check manifests < rendered.yaml | deploy-check compose FILE")
		os.Exit(2)
	}
	count, err := check(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if count == 0 {
		fmt.Fprintln(os.Stderr, "no manifest on standard input")
		os.Exit(1)
	}
	fmt.Printf("%d manifests decoded strictly\n", count)
}

func check(in io.Reader, out io.Writer) (int, error) {
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	count := 0
	var problems []string
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return count, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		count++
		name, err := decode(decoder, doc)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		fmt.Fprintf(out, "ok %s\n", name)
	}
	if len(problems) > 0 {
		return count, fmt.Errorf("%d of %d manifests failed strict decoding:\n%s", len(problems), count, strings.Join(problems, "\n"))
	}
	return count, nil
}

func decode(decoder runtime.Decoder, doc []byte) (string, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return "(unreadable)", err
	}
	name := fmt.Sprintf("%s %s/%s", head.APIVersion, head.Kind, head.Metadata.Name)
	if head.APIVersion == "monitoring.coreos.com/v1" && head.Kind == "ServiceMonitor" {
		var monitor ServiceMonitor
		return name, yaml.UnmarshalStrict(doc, &monitor)
	}
	_, _, err := decoder.Decode(doc, nil, nil)
	return name, err
}

// stripComments drops comment lines, so a document holding only Helm's "# Source:" line is empty.
func stripComments(doc []byte) []byte {
	var kept [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			kept = append(kept, line)
		}
	}
	return bytes.Join(kept, []byte("\n"))
}

// checkCompose validates a Compose file (YAML anchors and merge keys resolved) against the schema.
func checkCompose(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	asJSON, err := yaml.YAMLToJSON(text)
	if err != nil {
		return err
	}
	var document map[string]interface{}
	if err := json.Unmarshal(asJSON, &document); err != nil {
		return err
	}
	return schema.Validate(document)
}
