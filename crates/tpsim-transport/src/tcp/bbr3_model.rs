//! BBR v3's per-ACK steps (draft-ietf-ccwg-bbr-06 §5.2.3): the model and state machine, then
//! the control parameters.

use super::*;

impl Bbr3 {
    /// §5.2.3 UpdateModelAndState, preceded by the per-loss steps of the ACK's losses (§5.2.4)
    /// and the ECN response of the module docs.
    pub(super) fn update_model_and_state(&mut self, now: SimTime, ev: &AckEvent, w: Window, cx: &CcContext) {
        self.now = now;
        self.update_latest_delivery_signals(ev);
        if ev.newly_lost > 0 {
            self.on_loss(ev, w, cx);
        }
        if std::mem::take(&mut self.ece_pending) {
            self.on_ece(ev, w, cx);
        }
        self.update_congestion_signals(ev, w);
        self.update_ack_aggregation(ev, w);
        self.check_full_bw_reached(ev);
        self.check_startup_done(ev, cx);
        self.check_drain_done(ev, cx);
        if ev.newly_delivered > 0 {
            self.update_probe_bw_cycle_phase(ev, w, cx);
        }
        self.update_min_rtt(ev);
        self.check_probe_rtt(ev, w, cx);
        self.advance_latest_delivery_signals(ev);
        // §5.5.10.3 BoundBWForModel.
        self.bw = self.max_bw().min(self.bw_shortterm);
    }

    /// §5.5.10.3 UpdateLatestDeliverySignals.
    fn update_latest_delivery_signals(&mut self, ev: &AckEvent) {
        self.loss_round_start = false;
        let Some(rs) = ev.rate else { return };
        self.bw_latest = self.bw_latest.max(rs.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = ev.delivered;
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.3 AdvanceLatestDeliverySignals.
    fn advance_latest_delivery_signals(&mut self, ev: &AckEvent) {
        if let (true, Some(rs)) = (self.loss_round_start, ev.rate) {
            self.bw_latest = rs.delivery_rate;
            self.inflight_latest = rs.delivered;
        }
    }

    /// §5.5.10.2 NoteLoss.
    fn note_loss(&mut self, ev: &AckEvent) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = ev.delivered;
        }
        self.is_loss_in_round = true;
    }

    /// §5.5.10.2 HandleLostPacket, once for the ACK's losses (see the module docs).
    fn on_loss(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) {
        self.note_loss(ev);
        self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
        if !self.is_bw_probe_sample {
            return;
        }
        if let Some(rs) = ev.rate.filter(|rs| Self::is_inflight_too_high(rs, cx)) {
            self.handle_inflight_too_high(rs.tx_in_flight, rs.is_app_limited, ev, w, cx);
        }
    }

    /// The ECN response (module docs): a lossy round; Startup ends; a probe ends as too high.
    fn on_ece(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) {
        self.note_loss(ev);
        if self.state == Bbr3State::Startup {
            self.handle_queue_too_high_in_startup(cx);
        } else if self.is_bw_probe_sample {
            let tx = ev.rate.map_or(ev.prior_in_flight, |rs| rs.tx_in_flight);
            let app_limited = ev.rate.is_some_and(|rs| rs.is_app_limited);
            self.handle_inflight_too_high(tx, app_limited, ev, w, cx);
        }
    }

    /// §5.5.10.2 HandleInflightTooHigh: the probe put too much in flight.
    fn handle_inflight_too_high(
        &mut self,
        tx_in_flight: u64,
        app_limited: bool,
        ev: &AckEvent,
        w: Window,
        cx: &CcContext,
    ) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false;
        if !app_limited {
            let target = (self.target_inflight(w, cx) as f64 * BETA) as u64;
            self.inflight_longterm = tx_in_flight.max(target);
        }
        if self.state == Bbr3State::ProbeBwUp {
            self.start_probe_bw_down(ev.delivered);
        }
    }

    /// §5.5.10.3 UpdateCongestionSignals (with §5.5.5 UpdateMaxBw and §5.5.1 UpdateRound).
    fn update_congestion_signals(&mut self, ev: &AckEvent, w: Window) {
        self.round_start = false;
        if let Some(rs) = ev.rate {
            if rs.prior_delivered >= self.next_round_delivered {
                self.start_round(ev.delivered);
                self.round_count += 1;
                self.rounds_since_probe_up += 1;
                self.round_start = true;
            }
            if rs.delivery_rate > 0.0 && (rs.delivery_rate >= self.max_bw() || !rs.is_app_limited) {
                let slot = &mut self.max_bw_slots[0];
                *slot = slot.max(rs.delivery_rate);
            }
        }
        if !self.loss_round_start {
            return;
        }
        // §5.5.10.3 AdaptLowerBoundsFromCongestion, once per round.
        if !self.state.is_probing_bw() && self.is_loss_in_round {
            if self.bw_shortterm.is_infinite() {
                self.bw_shortterm = self.max_bw();
            }
            if self.inflight_shortterm == INF {
                self.inflight_shortterm = w.cwnd;
            }
            self.bw_shortterm = self.bw_latest.max(BETA * self.bw_shortterm);
            self.inflight_shortterm = self.inflight_latest.max((BETA * self.inflight_shortterm as f64) as u64);
        }
        self.is_loss_in_round = false;
    }

    /// §5.5.6 AdvanceMaxBwFilter: a new ProbeBW cycle; the previous one's maximum is kept.
    fn advance_max_bw_filter(&mut self) {
        self.max_bw_slots = [0.0, self.max_bw_slots[0]];
    }

    /// §5.5.9 UpdateACKAggregation (the window kept as two halves, each of half the rounds;
    /// one round in Startup).
    fn update_ack_aggregation(&mut self, ev: &AckEvent, w: Window) {
        let now = self.now;
        let interval = now.saturating_since(self.extra_acked_interval_start).as_secs_f64();
        let mut expected = (self.bw * interval) as u64;
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = now;
            expected = 0;
        }
        self.extra_acked_delivered += ev.newly_delivered;
        let extra = self.extra_acked_delivered.saturating_sub(expected).min(w.cwnd);
        if self.round_start {
            self.extra_acked_rounds += 1;
            if !self.full_bw_reached || self.extra_acked_rounds >= EXTRA_ACKED_FILTER_ROUNDS / 2 {
                self.extra_acked_idx ^= 1;
                self.extra_acked_slots[self.extra_acked_idx] = 0;
                self.extra_acked_rounds = 0;
            }
        }
        let slot = &mut self.extra_acked_slots[self.extra_acked_idx];
        *slot = (*slot).max(extra);
        self.extra_acked = if self.full_bw_reached {
            self.extra_acked_slots[0].max(self.extra_acked_slots[1])
        } else {
            self.extra_acked_slots[self.extra_acked_idx]
        };
    }

    /// §5.3.1.2 ResetFullBW.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.2 CheckFullBWReached: three rounds without 25 % more delivery rate.
    fn check_full_bw_reached(&mut self, ev: &AckEvent) {
        let Some(rs) = ev.rate else { return };
        if self.full_bw_now || !self.round_start || rs.is_app_limited || rs.delivery_rate == 0.0 {
            return;
        }
        if rs.delivery_rate >= self.full_bw * 1.25 {
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= 3;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// §5.3.1 CheckStartupDone with §5.3.1.3 CheckStartupHighLoss: at the end of a round in
    /// recovery with at least 6 loss events and a loss rate above LossThresh (any loss
    /// without SACK).
    fn check_startup_done(&mut self, ev: &AckEvent, cx: &CcContext) {
        if self.state == Bbr3State::Startup && !self.full_bw_reached && self.loss_round_start && ev.in_recovery {
            let too_high = ev.rate.is_some_and(|rs| Self::is_inflight_too_high(&rs, cx));
            if too_high && (self.loss_events_in_round >= STARTUP_FULL_LOSS_COUNT || !cx.sack) {
                self.handle_queue_too_high_in_startup(cx);
            }
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
        if self.state == Bbr3State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// §5.3.1.3: the pipe is full; inflight_longterm from what the losses suggest; Drain.
    fn handle_queue_too_high_in_startup(&mut self, cx: &CcContext) {
        self.full_bw_reached = true;
        self.inflight_longterm = self.bdp_multiple(self.max_bw(), 1.0, cx).max(self.inflight_latest);
        self.enter_drain();
    }

    /// §5.3.2 EnterDrain.
    fn enter_drain(&mut self) {
        self.state = Bbr3State::Drain;
        self.drain_start_round = self.round_count;
    }

    /// §5.3.2 CheckDrainDone.
    fn check_drain_done(&mut self, ev: &AckEvent, cx: &CcContext) {
        if self.state == Bbr3State::Drain
            && (ev.in_flight <= self.inflight(self.bw, 1.0, cx) || self.round_count > self.drain_start_round + 3)
        {
            // §5.3.3.9 EnterProbeBW.
            self.start_probe_bw_down(ev.delivered);
        }
    }

    /// §5.3.3.8 PickProbeWait: 0 or 1 rounds already counted, 2–3 s of wall clock.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = self.next_random() % 2;
        let frac = (self.next_random() >> 11) as f64 / (1u64 << 53) as f64;
        self.bw_probe_wait = SimDuration::from_secs(2) + SimDuration((frac * 1e9) as u64);
    }

    /// §5.3.3.9 StartProbeBW_DOWN.
    fn start_probe_bw_down(&mut self, delivered: u64) {
        // ResetCongestionSignals.
        self.is_loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
        self.probe_up_acked_per_inc = INF;
        self.pick_probe_wait();
        self.cycle_stamp = self.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round(delivered);
        self.state = Bbr3State::ProbeBwDown;
    }

    /// §5.3.3.9 StartProbeBW_CRUISE.
    fn start_probe_bw_cruise(&mut self) {
        self.state = Bbr3State::ProbeBwCruise;
    }

    /// §5.3.3.9 StartProbeBW_REFILL: the short-term bounds are lifted for the probe.
    fn start_probe_bw_refill(&mut self, delivered: u64) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round(delivered);
        self.state = Bbr3State::ProbeBwRefill;
    }

    /// §5.3.3.9 StartProbeBW_UP.
    fn start_probe_bw_up(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round(ev.delivered);
        self.reset_full_bw();
        self.full_bw = ev.rate.map_or(0.0, |rs| rs.delivery_rate);
        self.state = Bbr3State::ProbeBwUp;
        self.raise_inflight_longterm_slope(w, cx);
    }

    /// §5.5.10.3 ResetShortTermModel.
    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = f64::INFINITY;
        self.inflight_shortterm = INF;
    }

    /// §5.3.3.9 RaiseInflightLongtermSlope: the increment doubles each round of UP.
    fn raise_inflight_longterm_slope(&mut self, w: Window, cx: &CcContext) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_acked_per_inc = (w.cwnd / growth_this_round).max(cx.smss);
    }

    /// §5.3.3.9 ProbeInflightLongtermUpward.
    fn probe_inflight_longterm_upward(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) {
        if !is_cwnd_limited(ev, w, cx) || w.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked += ev.newly_delivered;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm += delta * cx.smss;
        }
        if self.round_start {
            self.raise_inflight_longterm_slope(w, cx);
        }
    }

    /// §5.3.3.9 AdaptLongTermModel. Returns whether it decided a state transition.
    fn adapt_long_term_model(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !ev.rate.is_some_and(|rs| rs.is_app_limited) {
                self.advance_max_bw_filter();
            }
            // §5.3.3.6 precautionary probing: acceleration.
            if self.state.is_probe_bw() && self.prev_probe_precautionary && !self.prev_probe_too_high {
                self.start_probe_bw_refill(ev.delivered);
                return true;
            }
        }
        let too_high = ev.rate.is_some_and(|rs| Self::is_inflight_too_high(&rs, cx));
        if !too_high {
            if self.inflight_longterm == INF {
                return false;
            }
            if let Some(rs) = ev.rate {
                self.inflight_longterm = self.inflight_longterm.max(rs.tx_in_flight);
            }
            if self.state == Bbr3State::ProbeBwUp {
                self.probe_inflight_longterm_upward(ev, w, cx);
            }
        }
        false
    }

    /// §5.3.3.8 IsTimeToProbeBW: the wall-clock wait is over, or as many rounds as Reno
    /// would take to grow by the BDP (at most 63).
    fn is_time_to_probe_bw(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) -> bool {
        let reno_rounds = (self.target_inflight(w, cx) / cx.smss.max(1)).min(63);
        if self.now > self.cycle_stamp + self.bw_probe_wait || self.rounds_since_probe_up >= reno_rounds {
            self.start_probe_bw_refill(ev.delivered);
            return true;
        }
        false
    }

    /// §5.3.3.9 IsTimeToCruise.
    fn is_time_to_cruise(&self, ev: &AckEvent, cx: &CcContext) -> bool {
        ev.in_flight <= self.inflight_with_headroom(cx) && ev.in_flight <= self.inflight(self.max_bw(), 1.0, cx)
    }

    /// §5.3.3.9 IsTimeToGoDown.
    fn is_time_to_go_down(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) -> bool {
        if self.prev_probe_too_high && ev.in_flight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if is_cwnd_limited(ev, w, cx) && w.cwnd >= self.inflight_longterm {
            self.reset_full_bw();
            self.full_bw = ev.rate.map_or(0.0, |rs| rs.delivery_rate);
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// §5.3.3.9 UpdateProbeBWCyclePhase.
    fn update_probe_bw_cycle_phase(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) {
        if !self.full_bw_reached || self.adapt_long_term_model(ev, w, cx) || !self.state.is_probe_bw() {
            return;
        }
        let s = self.state;
        if s == Bbr3State::ProbeBwDown {
            if !self.is_time_to_probe_bw(ev, w, cx) && self.is_time_to_cruise(ev, cx) {
                self.start_probe_bw_cruise();
            }
        } else if s == Bbr3State::ProbeBwCruise {
            self.is_time_to_probe_bw(ev, w, cx);
        } else if s == Bbr3State::ProbeBwRefill && self.round_start {
            // One round of REFILL is over.
            self.is_bw_probe_sample = true;
            self.start_probe_bw_up(ev, w, cx);
        } else if s == Bbr3State::ProbeBwUp && self.is_time_to_go_down(ev, w, cx) {
            self.prev_probe_too_high = false;
            self.start_probe_bw_down(ev.delivered);
        }
    }

    /// §5.3.4.3 UpdateMinRTT.
    fn update_min_rtt(&mut self, ev: &AckEvent) {
        let now = self.now;
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if let Some(rtt) = ev.rtt {
            if self.probe_rtt_min_delay.is_none_or(|d| rtt < d) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + MIN_RTT_FILTER;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
    }

    /// §5.3.4.3 CheckProbeRTT with HandleProbeRTT and CheckProbeRTTDone.
    fn check_probe_rtt(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) {
        if self.state != Bbr3State::ProbeRtt && self.probe_rtt_expired {
            // EnterProbeRTT.
            self.save_cwnd(w, ev.in_recovery);
            self.state = Bbr3State::ProbeRtt;
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round(ev.delivered);
        }
        if self.state != Bbr3State::ProbeRtt {
            return;
        }
        match self.probe_rtt_done_stamp {
            None if ev.in_flight <= self.probe_rtt_cwnd(cx) => {
                self.probe_rtt_done_stamp = Some(self.now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.start_round(ev.delivered);
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && self.now > done {
                    self.probe_rtt_min_stamp = self.now;
                    self.restore_cwnd = true;
                    // §5.3.4.4 ExitProbeRTT.
                    self.reset_short_term_model();
                    if self.full_bw_reached {
                        self.start_probe_bw_down(ev.delivered);
                        self.start_probe_bw_cruise();
                    } else {
                        self.state = Bbr3State::Startup;
                    }
                }
            }
            None => {}
        }
    }

    /// §5.6.2 SetPacingRate (only upwards until the pipe is first full).
    pub(super) fn set_pacing_rate(&mut self) {
        let rate = self.pacing_gain() * self.bw * (1.0 - PACING_MARGIN);
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// §5.6.4.6 SetCwnd with §5.6.4.4's recovery steps, §5.6.4.5 BoundCwndForProbeRTT and
    /// §5.6.4.7 BoundCwndForModel. Returns cwnd, bytes.
    pub(super) fn set_cwnd(&mut self, ev: &AckEvent, w: Window, cx: &CcContext) -> u64 {
        let mut cwnd = w.cwnd;
        if ev.in_recovery && !self.was_in_recovery {
            // OnEnterFastRecovery: SaveCwnd.
            self.save_cwnd(w, false);
        } else if !ev.in_recovery && self.was_in_recovery {
            self.restore_cwnd = true;
        }
        self.was_in_recovery = ev.in_recovery;
        if std::mem::take(&mut self.restore_cwnd) {
            cwnd = cwnd.max(self.prior_cwnd);
        }
        let max_inflight = self.max_inflight(cx);
        if self.full_bw_reached {
            cwnd = (cwnd + ev.newly_delivered).min(max_inflight);
        } else if cwnd < max_inflight || ev.delivered < cx.initial_window {
            cwnd += ev.newly_delivered;
        }
        cwnd = cwnd.max(min_pipe(cx));
        if self.state == Bbr3State::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd(cx));
        }
        let mut cap = INF;
        if self.state.is_probe_bw() && self.state != Bbr3State::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if matches!(self.state, Bbr3State::ProbeRtt | Bbr3State::ProbeBwCruise) {
            cap = self.inflight_with_headroom(cx);
        }
        cap = cap.min(self.inflight_shortterm).max(min_pipe(cx));
        cwnd.min(cap)
    }
}

/// C.is_cwnd_limited: what was in flight before the ACK filled cwnd to within a segment.
fn is_cwnd_limited(ev: &AckEvent, w: Window, cx: &CcContext) -> bool {
    ev.prior_in_flight + cx.smss > w.cwnd
}
