package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

func sampleJob(t *testing.T) *router.Job {
	t.Helper()
	in, err := router.NewObjectInput(map[string]any{"text": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	return &router.Job{
		Kind: router.KindValidate, Version: 3, SessionID: 4, TaskID: "task-4-1", Replica: 1, Tier: router.TierSafe,
		MaxSteps: 3, TimeoutMS: 60000, Objective: "check", Input: in,
		Claim: &router.Claim{Type: "summary", Output: json.RawMessage(`"a summary"`)},
		Rules: []string{"consistency"}, Context: map[string]any{"market": "m1"},
	}
}

func TestHTTPWorker_fleet(t *testing.T) {
	// Three worker servers and one address where nothing listens.
	var received []*router.Job
	verdicts := []router.Verdict{router.VerdictValid, router.VerdictInvalid, router.VerdictValid}
	var urls []string
	for i, v := range verdicts {
		w := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
			if i == 0 {
				received = append(received, job)
			}
			return &router.Result{Verdict: v, Confidence: 0.5 + float64(i)/10, Reasons: []string{"worker " + string(rune('a'+i))}}, nil
		})
		srv := httptest.NewServer(router.NewWorkerHandler(w))
		defer srv.Close()
		urls = append(urls, srv.URL+"/work")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/work"
	ln.Close()
	urls = append(urls, down)

	job := sampleJob(t)
	for i, u := range urls {
		res, err := router.HTTPWorker(u).Work(context.Background(), job)
		if u == down {
			var ne net.Error
			if err == nil || !errors.As(err, &ne) {
				t.Errorf("worker down: %v, want a network error", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		want := &router.Result{Verdict: verdicts[i], Confidence: 0.5 + float64(i)/10, Reasons: []string{"worker " + string(rune('a'+i))}}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("worker %d result (-want +got):\n%s", i, diff)
		}
	}
	if len(received) != 1 {
		t.Fatalf("worker 0 received %d jobs, want 1", len(received))
	}
	if diff := cmp.Diff(job, received[0], inputComparer); diff != "" {
		t.Errorf("job after the wire (-sent +received):\n%s", diff)
	}
}

func TestHTTPWorker_errors(t *testing.T) {
	slow := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	tests := []struct {
		name   string
		worker router.Worker
		job    func(*router.Job)
		ctx    func() (context.Context, context.CancelFunc)
		check  func(t *testing.T, err error)
	}{
		{
			name:   "worker error",
			worker: router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) { return nil, errors.New("model overloaded") }),
			check: func(t *testing.T, err error) {
				var rw *router.RemoteWorkerError
				if !errors.As(err, &rw) || rw.StatusCode != 502 || rw.Problem.Detail != "model overloaded" {
					t.Errorf("error %v, want a RemoteWorkerError 502 with the worker's message", err)
				}
			},
		},
		{
			name:   "worker panic",
			worker: router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) { panic("bad") }),
			check: func(t *testing.T, err error) {
				var p *router.Error
				if !errors.As(err, &p) || p.Status != 500 {
					t.Errorf("error %v, want a 500 *router.Error", err)
				}
			},
		},
		{
			name:   "remote budget",
			worker: slow,
			job:    func(j *router.Job) { j.TimeoutMS = 20 },
			check: func(t *testing.T, err error) {
				var rw *router.RemoteWorkerError
				if !errors.As(err, &rw) || rw.StatusCode != 504 || rw.Problem.Code != "timeout" {
					t.Errorf("error %v, want a RemoteWorkerError 504 timeout", err)
				}
			},
		},
		{
			name:   "caller deadline",
			worker: slow,
			job:    func(j *router.Job) { j.TimeoutMS = 0 },
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v, want context.DeadlineExceeded", err)
				}
			},
		},
		{
			name: "oversized result",
			worker: router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
				return &router.Result{Output: strings.Repeat("x", 5000)}, nil
			}),
			check: func(t *testing.T, err error) {
				if !errors.Is(err, router.ErrResponseTooLarge) {
					t.Errorf("error %v, want ErrResponseTooLarge", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(router.NewWorkerHandler(tt.worker))
			defer srv.Close()
			job := sampleJob(t)
			if tt.job != nil {
				tt.job(job)
			}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			res, err := router.HTTPWorker(srv.URL, router.WithWorkerMaxResponseBytes(4096)).Work(ctx, job)
			if res != nil {
				t.Errorf("result %+v alongside an error, want nil", res)
			}
			tt.check(t, err)
		})
	}
}

func TestWorkerHandler_rejects(t *testing.T) {
	srv := httptest.NewServer(router.NewWorkerHandler(router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return &router.Result{}, nil
	})))
	defer srv.Close()
	for _, tt := range []struct {
		method, ctype, body string
		want                int
	}{
		{"GET", "application/json", "", 405},
		{"POST", "text/plain", "{}", 415},
		{"POST", "application/json", "{", 400},
		{"POST", "application/json", `{"session_id":"x"}`, 400},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL, strings.NewReader(tt.body))
		req.Header.Set("Content-Type", tt.ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s %q: status %d, want %d", tt.method, tt.ctype, tt.body, resp.StatusCode, tt.want)
		}
	}
}

func TestHTTPWorker_headers(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Write([]byte(`{"verdict":"VALID"}`))
	}))
	defer srv.Close()
	res, err := router.HTTPWorker(srv.URL, router.WithWorkerHeader("Authorization", "Bearer w"), router.WithWorkerHTTPClient(&http.Client{})).Work(context.Background(), sampleJob(t))
	if err != nil || res.Verdict != router.VerdictValid || auth != "Bearer w" {
		t.Errorf("got %+v, %v, Authorization %q; want VALID and the header sent", res, err, auth)
	}
}
