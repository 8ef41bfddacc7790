package order

import "time"

// Shop is the order's Behavior, written by hand: the arithmetic of the
// cart, and how long a placed order waits for its payment. Like every
// Behavior it is pure.
type Shop struct {
	// Window is how long a placed order waits for its payment; zero means
	// DefaultWindow.
	Window time.Duration
}

// DefaultWindow is how long a placed order waits for its payment unless
// the Shop says otherwise.
const DefaultWindow = 30 * time.Minute

// PaymentWindow says how long a placed order waits for its payment.
func (s Shop) PaymentWindow() time.Duration {
	if s.Window == 0 {
		return DefaultWindow
	}
	return s.Window
}

var _ Behavior = Shop{}

// HasItems reports whether the cart holds anything to pay for.
func (Shop) HasItems(total Cents) bool { return total > 0 }

// AddToTotal adds the item's price to the cart's total.
func (Shop) AddToTotal(total, price Cents) Cents { return total + price }
