package nodeclient_test

import (
	"encoding"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
)

// Dial says hello with the engine's name and gives the node's limits;
// Close says goodbye and ends the connection.
func TestDialWelcomesAndCloseSaysGoodbye(t *testing.T) {
	n := startFakeNode(t)
	ctx := bounded(t)
	c, err := nodeclient.Dial(ctx, n.path, nodeclient.Options{Engine: "vllm-0"})
	require.NoError(t, err)
	s := n.session(ctx)
	hello := s.next(ctx, nodewire.TypeHello).m.(*nodewire.Hello)
	assert.Equal(t, nodewire.Hello{Version: nodewire.Version, Engine: "vllm-0"}, *hello)
	assert.Equal(t, n.welcome, c.Welcome())
	assert.NoError(t, c.Err())

	require.NoError(t, c.Close(ctx))
	bye := s.next(ctx, nodewire.TypeClientGoodbye).m.(*nodewire.ClientGoodbye)
	assert.NotEmpty(t, bye.Reason)
	<-c.Done()
	assert.ErrorIs(t, c.Err(), nodeclient.ErrClosed)
	assert.NoError(t, c.Close(ctx), "a second Close does nothing")
	_, err = c.Lookup(ctx, view(group(0, nil, "a")), nodeclient.LookupOptions{})
	assert.ErrorIs(t, err, nodeclient.ErrClosed)
}

// A hello the node refuses, or a welcome of another version, fails
// Dial with the code's sentinel; an engine name out of bounds fails it
// before anything is sent.
func TestDialRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		engine  string
		scope   encoding.TextMarshaler
		answer  func(s *fakeSession, f got)
		want    error
		field   string
		dialled bool
	}{
		{name: "not allowed", engine: "e", want: nodewire.ErrNotAllowed, field: "peer.uid", dialled: true,
			answer: func(s *fakeSession, f got) {
				s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeNotAllowed, Field: "peer.uid", Message: "uid 1000 is not on the allow-list"})
			}},
		{name: "scope", engine: "e", want: nodewire.ErrScope, field: "hello.scope", dialled: true,
			answer: func(s *fakeSession, f got) {
				s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeScopeUnsupported, Field: "hello.scope"})
			}},
		{name: "other version", engine: "e", want: nodewire.ErrVersion, dialled: true,
			answer: func(s *fakeSession, f got) {
				w := s.n.welcome
				w.Version = 2
				s.reply(f.h.Request, &w)
			}},
		{name: "bad scope", engine: "e", scope: scopeText("kvscope1;junk"), want: nodewire.ErrBadScope, field: "hello.scope.model", dialled: true,
			answer: func(s *fakeSession, f got) {
				s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeBadScope, Field: "hello.scope.model", Message: "at offset 9: not a length"})
			}},
		{name: "tenant not allowed", engine: "e", scope: scopeText("kvscope1;acme"), want: nodewire.ErrTenantNotAllowed, field: "hello.scope.tenant", dialled: true,
			answer: func(s *fakeSession, f got) {
				s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeTenantNotAllowed, Field: "hello.scope.tenant", Message: `tenant "acme"`})
			}},
		{name: "a scope that does not encode", engine: "e", scope: failingScope{}, want: nodewire.ErrBadScope},
		{name: "a scope that encodes to nothing", engine: "e", scope: scopeText(""), want: nodewire.ErrBadScope},
		{name: "a scope not UTF-8", engine: "e", scope: scopeText("\xc3\x28"), want: nodewire.ErrBadScope},
		{name: "a scope longer than a str", engine: "e", scope: scopeText(strings.Repeat("s", 1<<16)), want: nodewire.ErrBadScope},
		{name: "empty engine", engine: "", want: nodewire.ErrProtocol},
		{name: "engine too long", engine: strings.Repeat("e", nodewire.MaxEngineName+1), want: nodewire.ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startFakeNode(t)
			n.setHook(func(s *fakeSession, f got) bool {
				if f.h.Type != nodewire.TypeHello {
					return false
				}
				tc.answer(s, f)
				return true
			})
			ctx := bounded(t)
			c, err := nodeclient.Dial(ctx, n.path, nodeclient.Options{Engine: tc.engine, Scope: tc.scope})
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, tc.want)
			if tc.field != "" {
				var r *nodewire.RefusedError
				require.True(t, errors.As(err, &r), "%v", err)
				assert.Equal(t, tc.field, r.Field)
			}
			assert.Equal(t, tc.dialled, len(n.sessions) == 1, "a session reached the node")
		})
	}
}

// scopeText is a scope as its canonical text, already encoded.
type scopeText string

func (s scopeText) MarshalText() ([]byte, error) { return []byte(s), nil }

// failingScope is a scope that does not validate.
type failingScope struct{}

func (failingScope) MarshalText() ([]byte, error) { return nil, errors.New("model: required") }

// The hello carries the scope's canonical text as it is, and no scope
// as an empty str.
func TestDialSaysTheScope(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope encoding.TextMarshaler
		want  string
	}{
		{"scoped", scopeText("kvscope1;5:llama,"), "kvscope1;5:llama,"},
		{"no scope", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startFakeNode(t)
			ctx := bounded(t)
			c, err := nodeclient.Dial(ctx, n.path, nodeclient.Options{Engine: "vllm-0", Scope: tc.scope})
			require.NoError(t, err)
			hello := n.session(ctx).next(ctx, nodewire.TypeHello).m.(*nodewire.Hello)
			assert.Equal(t, tc.want, hello.Scope)
			require.NoError(t, c.Close(ctx))
		})
	}
}

// Nothing listening: Dial fails at once, naming the path.
func TestDialNoNode(t *testing.T) {
	path := t.TempDir() + "/none.sock"
	_, err := nodeclient.Dial(bounded(t), path, nodeclient.Options{Engine: "e"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}
