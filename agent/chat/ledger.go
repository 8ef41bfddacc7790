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
}

// Add counts the usage of one reply.
func (l *Ledger) Add(u Usage) {
	l.Total = l.Total.Add(u)
	l.Turn = l.Turn.Add(u)
	l.Replies++
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
