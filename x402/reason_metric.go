package x402

// reasonOther stands in vouch.x402.payments for a facilitator's reason
// that neither the x402 specification nor this module names: a remote
// facilitator's reasons are free text, and each would be a new series.
const reasonOther = "_OTHER"

// meteredReason returns reason if the x402 specification or this
// module's facilitators name it, and reasonOther if not. The empty
// reason stays empty.
func meteredReason(reason string) string {
	switch reason {
	case "",
		// The error codes of the x402 specification, versions 1 and 2,
		// and of its schemes.
		"insufficient_funds",
		"invalid_exact_evm_payload_authorization_valid_after",
		"invalid_exact_evm_payload_authorization_valid_before",
		"invalid_exact_evm_payload_authorization_value",
		"invalid_exact_evm_payload_authorization_value_mismatch",
		"invalid_exact_evm_payload_signature",
		"invalid_exact_evm_payload_recipient_mismatch",
		"invalid_network",
		"invalid_payload",
		"invalid_payment_requirements",
		"invalid_scheme",
		"unsupported_scheme",
		"invalid_x402_version",
		"invalid_transaction_state",
		"unexpected_verify_error",
		"unexpected_settle_error",
		"invalid_upto_evm_payload_settlement_exceeds_amount",
		// This package's own.
		reasonUnexpected,
		// The reasons of package evm's facilitators.
		"invalid_exact_evm_asset_mismatch",
		"invalid_exact_evm_nonce_already_used",
		"upto_facilitator_mismatch",
		"invalid_permit2_signature",
		"invalid_permit2_recipient_mismatch",
		"invalid_permit2_spender",
		"permit2_amount_mismatch",
		"permit2_deadline_expired",
		"permit2_invalid_nonce",
		"permit2_not_yet_valid",
		"permit2_token_mismatch",
		"invalid_auth_capture_evm_payload_format",
		"invalid_auth_capture_evm_payload_type",
		"invalid_auth_capture_evm_extra",
		"invalid_auth_capture_evm_payload_method_mismatch",
		"invalid_auth_capture_evm_deadline_ordering",
		"invalid_auth_capture_evm_capture_deadline_expired",
		"invalid_auth_capture_evm_refund_deadline_expired",
		"invalid_auth_capture_evm_authorization_expired",
		"invalid_auth_capture_evm_authorization_not_yet_valid",
		"invalid_auth_capture_evm_token_collector_mismatch",
		"invalid_auth_capture_evm_token_mismatch",
		"invalid_auth_capture_evm_signature",
		"invalid_auth_capture_evm_amount_mismatch",
		"invalid_auth_capture_evm_nonce_mismatch",
		"invalid_auth_capture_evm_salt_binding_mismatch",
		"invalid_auth_capture_evm_operator_mismatch",
		"invalid_auth_capture_evm_authorizer_signature",
		"invalid_auth_capture_evm_void_authorizer_signature",
		"invalid_auth_capture_evm_unexpected_payment_state",
		"invalid_auth_capture_evm_lifecycle_not_relayed",
		"invalid_auth_capture_evm_unsupported_operator_type",
		"invalid_auth_capture_evm_operator_not_admitted",
		"invalid_auth_capture_evm_unsupported_payment_flow",
		"invalid_auth_capture_evm_insufficient_balance",
		"invalid_auth_capture_evm_payment_already_collected",
		"invalid_auth_capture_evm_fee_bps_out_of_range",
		"invalid_auth_capture_evm_fee_receiver",
		"invalid_auth_capture_evm_insufficient_authorization",
		"invalid_auth_capture_evm_zero_authorization",
		"invalid_auth_capture_evm_refund_exceeds_capture",
		"invalid_auth_capture_evm_refund_funding_unavailable",
		"invalid_auth_capture_evm_void_remainder_full_capture",
		"invalid_auth_capture_evm_zero_fee_receiver",
		"invalid_auth_capture_evm_scheme",
		"invalid_auth_capture_evm_network_mismatch",
		"invalid_auth_capture_evm_sender",
		"invalid_auth_capture_evm_before_authorization_expiry":
		return reason
	}
	return reasonOther
}
