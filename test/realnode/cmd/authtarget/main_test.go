package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetricsNeedTheCredentials: /metrics answers 401 without credentials and with wrong ones,
// serves the counter with the right ones, and /counts reports both kinds.
func TestMetricsNeedTheCredentials(t *testing.T) {
	tg := &target{user: "scraper", password: "hunter2"}
	srv := httptest.NewServer(tg.handler())
	defer srv.Close()
	get := func(user, password string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", code)
	}
	if code, _ := get("scraper", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	code, body := get("scraper", "hunter2")
	if code != http.StatusOK || !strings.Contains(body, MetricName+" 1\n") {
		t.Errorf("right credentials: %d %q, want 200 and %s 1", code, body, MetricName)
	}
	resp, err := http.Get(srv.URL + "/counts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c Counts
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c != (Counts{Authorized: 1, Unauthorized: 2}) {
		t.Errorf("counts %+v, want 1 authorized and 2 unauthorized", c)
	}
}
