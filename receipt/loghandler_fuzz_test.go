package receipt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
)

// FuzzLogHandler sends GET requests with any receipt id and any query
// to the receipt and log endpoints: the handler answers 200, or a 4xx
// problem of the same status, never a 5xx. A receipt it serves is one of
// the caller's as stored; an inclusion proof proves the receipt in the
// tree it names; a consistency proof is served only for sizes 0 <=
// first <= second <= the log's, given once each as decimal integers
// without sign or leading zeros, and
// proves the tree of second extends the tree of first.
func FuzzLogHandler(f *testing.F) {
	ids := []string{"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa", "rcpt_bbbbbbbbbbbbbbbbbbbbbbbbba", "rcpt_cccccccccccccccccccccccccq"}
	f.Add(uint8(0), "", "first=1&second=3")
	f.Add(uint8(0), "", "first=0&second=0")
	f.Add(uint8(0), "", "first=2&first=2&second=x")
	f.Add(uint8(0), "", "first=-1&second=99999999999999999999")
	f.Add(uint8(0), "", "first=-0&second=01")
	f.Add(uint8(1), ids[1], "")
	f.Add(uint8(2), ids[0], "")
	f.Add(uint8(2), ids[2], "")
	f.Add(uint8(2), "rcpt_zzzzzzzzzzzzzzzzzzzzzzzzzz", "")
	f.Add(uint8(3), "", "")
	store := &receipt.MemStore{}
	var leaves [][]byte
	for i, id := range ids {
		data := []byte(fmt.Sprintf(`{"receipt_id":%q,"n":%d}`, id, i))
		owner := "o"
		if i == 2 {
			owner = "other"
		}
		if err := store.Put(context.Background(), receipt.Record{ID: id, Data: data, Owner: owner, ExpiresAt: t0().Add(time.Hour)}); err != nil {
			f.Fatal(err)
		}
		leaves = append(leaves, data)
	}
	l, err := receipt.NewLog("example.com/test-log", newSigner(f, 1), store)
	if err != nil {
		f.Fatal(err)
	}
	// The tree, hashed here from the leaves.
	var stored []tlog.Hash
	read := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for i, d := range leaves {
		hs, err := tlog.StoredHashes(int64(i), d, read)
		if err != nil {
			f.Fatal(err)
		}
		stored = append(stored, hs...)
	}
	size := int64(len(leaves))
	treeHash := func(t *testing.T, n int64) tlog.Hash {
		h, err := tlog.TreeHash(n, read)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := &receipt.Handler{Store: store, Log: l, Now: t0, Caller: func(*http.Request) (string, error) { return "o", nil }}
	f.Fuzz(func(t *testing.T, route uint8, id, query string) {
		var path string
		switch route % 4 {
		case 0:
			path = receipt.ConsistencyPath
		case 1:
			path = receipt.ReceiptPath + id + receipt.ProofSuffix
		case 2:
			path = receipt.ReceiptPath + id
		default:
			path = receipt.LogPath
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path, r.URL.RawQuery = path, query
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			var p problem.Details
			if w.Code < 400 || w.Code > 499 || json.Unmarshal(w.Body.Bytes(), &p) != nil || p.Status != w.Code {
				t.Fatalf("GET %s?%s: %d %q", path, query, w.Code, w.Body)
			}
			return
		}
		switch route % 4 {
		case 0:
			q, err := url.ParseQuery(query)
			first, err1 := strconv.ParseInt(q.Get("first"), 10, 64)
			second, err2 := strconv.ParseInt(q.Get("second"), 10, 64)
			if err != nil || err1 != nil || err2 != nil || len(q["first"]) != 1 || len(q["second"]) != 1 ||
				strconv.FormatInt(first, 10) != q.Get("first") || strconv.FormatInt(second, 10) != q.Get("second") || first < 0 || first > second || second > size {
				t.Fatalf("GET %s?%s: 200 %s", path, query, w.Body)
			}
			var cr receipt.ConsistencyResponse
			if err := json.Unmarshal(w.Body.Bytes(), &cr); err != nil {
				t.Fatal(err)
			}
			if first > 0 {
				if err := tlog.CheckTree(cr.Proof, second, treeHash(t, second), first, treeHash(t, first)); err != nil {
					t.Fatalf("GET %s?%s: the proof does not check: %v", path, query, err)
				}
			}
		case 1:
			var pr receipt.ProofResponse
			if err := json.Unmarshal(w.Body.Bytes(), &pr); err != nil || pr.LogIndex < 0 || pr.LogIndex >= size || pr.TreeSize > size {
				t.Fatalf("GET %s: 200 %s (%v)", path, w.Body, err)
			}
			if id != ids[pr.LogIndex] || strings.Contains(id, "cccc") {
				t.Fatalf("GET %s: the proof of receipt %d", path, pr.LogIndex)
			}
			if err := tlog.CheckRecord(pr.InclusionProof, pr.TreeSize, treeHash(t, pr.TreeSize), pr.LogIndex, tlog.RecordHash(leaves[pr.LogIndex])); err != nil {
				t.Fatalf("GET %s: the proof does not check: %v", path, err)
			}
		case 2:
			if !bytes.Contains(w.Body.Bytes(), []byte(id)) || id != ids[0] && id != ids[1] {
				t.Fatalf("GET %s: 200 %s", path, w.Body)
			}
		}
	})
}
