package expense

// Cents is an amount of money in cents.
type Cents int64

// Claims is the claim's Behavior, written by hand: the arithmetic of its
// total. Like every Behavior it is pure.
type Claims struct{}

var _ Behavior = Claims{}

// HasCosts reports whether the claim holds anything to pay.
func (Claims) HasCosts(total Cents) bool { return total > 0 }

// AddCost adds the cost's amount to the claim's total.
func (Claims) AddCost(total, amount Cents) Cents { return total + amount }
