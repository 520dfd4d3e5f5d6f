package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/smppserver"
	"github.com/msgsvc/msgsvc/internal/user"
)

// wireSMPP makes the SMPP server for customers when --smpp-listen asks for
// one, and listens at once like the HTTP front.
func (s *Server) wireSMPP(limiter ratelimit.Limiter, guard smppserver.Guard, slots *user.Slots) error {
	cfg := s.cfg
	if cfg.SMPPListen == "" {
		return nil
	}
	var tlsCfg *tls.Config
	if cfg.SMPPTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.SMPPTLSCert, cfg.SMPPTLSKey)
		if err != nil {
			return fmt.Errorf("smpp-tls-cert: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", cfg.SMPPListen)
	if err != nil {
		return fmt.Errorf("smpp-listen on %s: %w", cfg.SMPPListen, err)
	}
	s.smppListener = ln
	s.smpp = smppserver.New(smppserver.Config{Users: s.store, Sender: s.sends, Items: s.store, Binds: s.store, Limiter: limiter,
		Guard: guard, Slots: slots, Refusals: s.store, TLS: tlsCfg, Owner: cfg.NodeID, Poll: s.poll, Hasher: s.hasher, Now: s.now, Log: s.log,
		Observer: newSMPPMetrics(s.reg, s.store.PendingSMPPItems)})
	return nil
}

// SMPPAddr is the address the SMPP server listens on ("" when off).
func (s *Server) SMPPAddr() string {
	if s.smppListener == nil {
		return ""
	}
	return s.smppListener.Addr().String()
}

// wakeSMPP tells the SMPP server that receipts may wait in the table;
// without binds on this node its claim reads nothing.
func (s *Server) wakeSMPP() {
	if s.smpp != nil {
		s.smpp.Wake()
	}
}

// smppHandoff is the SMPP server as the receipts' writer sees it: none
// until --smpp-listen made one, and then the rows of users bound to it for
// receiving are handed over in memory.
type smppHandoff struct{ s *Server }

func (h smppHandoff) LeaseReceipt(userID string) (string, time.Time, bool) {
	if h.s.smpp == nil {
		return "", time.Time{}, false
	}
	return h.s.smpp.LeaseReceipt(userID)
}

func (h smppHandoff) HandReceipts(ctx context.Context, items []domain.SMPPItem) {
	if h.s.smpp != nil {
		h.s.smpp.HandReceipts(ctx, items)
	}
}

// smppRemoved closes a removed SMPP user's binds on this node at once.
func (s *Server) smppRemoved(userID string) {
	if s.smpp != nil {
		s.smpp.UserRemoved(userID)
	}
}

func newSMPPMetrics(reg *prometheus.Registry, pending func(context.Context) (int, error)) smppserver.Observer {
	binds := prometheus.NewGauge(prometheus.GaugeOpts{Name: "msgsvc_smpp_binds", Help: "SMPP binds open on this node."})
	submits := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgsvc_smpp_submits_total",
		Help: "submit_sm answered, by command_status."}, []string{"status"})
	bindFails := prometheus.NewCounter(prometheus.CounterOpts{Name: "msgsvc_smpp_bind_failures_total",
		Help: "Binds refused (ESME_RBINDFAIL)."})
	receipts := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgsvc_smpp_deliver_sm_total",
		Help: "deliver_sm sent to binds, by whether they were acknowledged."}, []string{"outcome"})
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "msgsvc_smpp_receipts_waiting",
		Help: "Receipts and replies waiting for a bind to acknowledge them."}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := pending(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	reg.MustRegister(binds, submits, bindFails, receipts, waiting)
	return smppserver.Observer{
		Binds:    func(d int) { binds.Add(float64(d)) },
		Submit:   func(st uint32) { submits.WithLabelValues(pdu.Status(st).String()).Inc() },
		BindFail: bindFails.Inc,
		Receipt: func(acked bool, _ time.Duration) {
			outcome := "acknowledged"
			if !acked {
				outcome = "unacknowledged"
			}
			receipts.WithLabelValues(outcome).Inc()
		},
	}
}
