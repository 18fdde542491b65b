package oascheck

import (
	"net/http"
	"strings"
	"testing"
)

const doc = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],
"paths":{"/x/{id}":{"get":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],
"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","additionalProperties":false,
"required":["a"],"properties":{"a":{"type":"integer"}}}}}}}}}}}`

func TestCheckFindsDrift(t *testing.T) {
	c, err := New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/x/7", nil)
	h := http.Header{"Content-Type": {"application/json"}}
	if err := c.Check(req, 200, h, []byte(`{"a":1}`)); err != nil {
		t.Errorf("a described answer: %v", err)
	}
	for name, tc := range map[string]struct {
		status int
		body   string
	}{
		"wrong type":         {200, `{"a":"one"}`},
		"missing required":   {200, `{}`},
		"unknown field":      {200, `{"a":1,"b":2}`},
		"undescribed status": {418, `{"a":1}`},
	} {
		if err := c.Check(req, tc.status, h, []byte(tc.body)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A route the document lacks: an error, unless the server said so.
	other, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/y", nil)
	if err := c.Check(other, 200, h, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "no such operation") {
		t.Errorf("undocumented route: %v", err)
	}
	if err := c.Check(other, 404, h, []byte(`{}`)); err != nil {
		t.Errorf("404 of an unknown route: %v", err)
	}
	if !c.Seen()["GET /x/{id} 200"] {
		t.Errorf("seen: %v", c.Seen())
	}
}

func TestNewRefusesAnInvalidDocument(t *testing.T) {
	if _, err := New([]byte(`{"openapi":"3.0.3","info":{"title":"t"},"paths":{"x":{}}}`)); err == nil {
		t.Error("an invalid document loaded")
	}
}
