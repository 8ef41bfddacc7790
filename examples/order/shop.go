package order

// Shop is the order's Behavior, written by hand: the arithmetic of the
// cart. Like every Behavior it is pure.
type Shop struct{}

var _ Behavior = Shop{}

// HasItems reports whether the cart holds anything to pay for.
func (Shop) HasItems(total Cents) bool { return total > 0 }

// AddToTotal adds the item's price to the cart's total.
func (Shop) AddToTotal(total, price Cents) Cents { return total + price }
