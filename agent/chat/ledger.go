package chat

// Ledger is the account of one thread. Its zero value is an empty
// account, ready to use.
type Ledger struct {
	// Total is what every reply of the thread used.
	Total Usage `json:"total"`
	// Turn is what the replies of the turn in progress used so far.
	Turn Usage `json:"turn"`
	// Turns holds what each ended turn used, oldest first.
	Turns []Usage `json:"turns,omitempty"`
	// Replies counts the replies counted, failed ones included.
	Replies int `json:"replies"`
	// Models holds what the replies of each model used, in the order the
	// thread used them, an entry for each stretch of replies of one model:
	// a thread goes from model to model (the agent's /model), and each
	// model's tokens have its own price. The last entry is the model of
	// the last reply. The part of Total no entry counts (a thread saved
	// before the models were recorded) was used by models the ledger does
	// not know.
	Models []ModelUsage `json:"models,omitempty"`
}

// ModelUsage is what the replies of one model used.
type ModelUsage struct {
	// Provider names the provider whose API served the model, e.g.
	// "anthropic".
	Provider string `json:"provider"`
	// Model names the model, as the requests named it.
	Model string `json:"model"`
	// Usage is what its replies used.
	Usage Usage `json:"usage"`
}

// Add counts the usage of one reply whose model is not known.
func (l *Ledger) Add(u Usage) {
	l.Total = l.Total.Add(u)
	l.Turn = l.Turn.Add(u)
	l.Replies++
}

// AddOf counts the usage of one reply of model, served by provider: as
// Add does, and in the last entry of Models when it is the model's, else
// in a new one.
func (l *Ledger) AddOf(provider, model string, u Usage) {
	l.AddLedger(Ledger{Total: u, Replies: 1, Models: []ModelUsage{{Provider: provider, Model: model, Usage: u}}})
}

// AddLedger counts the replies of another ledger (a subagent's) as
// replies of this one's turn in progress: its total, its replies and
// each model's part, so that each is priced at its own model.
func (l *Ledger) AddLedger(o Ledger) {
	l.Total, l.Turn = l.Total.Add(o.Total), l.Turn.Add(o.Total)
	l.Replies += o.Replies
	for _, m := range o.Models {
		if n := len(l.Models); n > 0 && l.Models[n-1].Provider == m.Provider && l.Models[n-1].Model == m.Model {
			l.Models[n-1].Usage = l.Models[n-1].Usage.Add(m.Usage)
			continue
		}
		l.Models = append(l.Models, m)
	}
}

// LastModel returns the model of the last reply counted with AddOf, and
// its provider; ok is false when there was none.
func (l Ledger) LastModel() (provider, model string, ok bool) {
	if len(l.Models) == 0 {
		return "", "", false
	}
	m := l.Models[len(l.Models)-1]
	return m.Provider, m.Model, true
}

// Unattributed returns the part of Total that no entry of Models counts:
// what replies of unknown models used. Figures are never negative.
func (l Ledger) Unattributed() Usage {
	u := l.Total
	for _, m := range l.Models {
		u = Usage{
			InputTokens:              max(u.InputTokens-m.Usage.InputTokens, 0),
			OutputTokens:             max(u.OutputTokens-m.Usage.OutputTokens, 0),
			CacheCreationInputTokens: max(u.CacheCreationInputTokens-m.Usage.CacheCreationInputTokens, 0),
			CacheReadInputTokens:     max(u.CacheReadInputTokens-m.Usage.CacheReadInputTokens, 0),
			ReasoningTokens:          max(u.ReasoningTokens-m.Usage.ReasoningTokens, 0),
		}
	}
	return u
}

// EndTurn closes the turn in progress: it joins Turns and Turn starts
// again from zero.
func (l *Ledger) EndTurn() {
	l.Turns = append(l.Turns, l.Turn)
	l.Turn = Usage{}
}

// LastTurn returns what the last ended turn used; ok is false when no
// turn has ended.
func (l Ledger) LastTurn() (u Usage, ok bool) {
	if len(l.Turns) == 0 {
		return Usage{}, false
	}
	return l.Turns[len(l.Turns)-1], true
}
