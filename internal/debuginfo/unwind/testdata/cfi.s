# Frames written by hand, for the call frame instructions and
# augmentations compilers rarely emit. The functions are never called:
# only their tables are read. .cfi_escape writes instructions gas has no
# directive for; the comments give their meaning (data alignment -8).
	.cfi_sections .eh_frame, .debug_frame
	.text
	.globl	cfi_forms
	.type	cfi_forms, @function
cfi_forms:
	.cfi_startproc
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	push	%rbx
	.cfi_offset %rbx, -24
	.cfi_remember_state
	.skip	100, 0x90			# DW_CFA_advance_loc1
	.cfi_same_value %rbx
	.skip	300, 0x90			# DW_CFA_advance_loc2
	.cfi_undefined %r12
	.cfi_register %r13, %r14
	nop
	.cfi_restore_state
	.skip	70000, 0x90			# DW_CFA_advance_loc4
	.cfi_escape 0x14, 0x0f, 0x05		# DW_CFA_val_offset r15, v-40
	nop
	.cfi_escape 0x2e, 0x10			# DW_CFA_GNU_args_size 16
	nop
	.cfi_escape 0x12, 0x06, 0x7e		# DW_CFA_def_cfa_sf rbp, 16
	nop
	.cfi_escape 0x13, 0x7d			# DW_CFA_def_cfa_offset_sf 24
	nop
	.cfi_escape 0x11, 0x0c, 0x7d		# DW_CFA_offset_extended_sf r12, c+24
	nop
	.cfi_escape 0x2f, 0x0d, 0x04		# DW_CFA_GNU_negative_offset_extended r13, c+32
	nop
	.cfi_escape 0x15, 0x0e, 0x7c		# DW_CFA_val_offset_sf r14, v+32
	nop
	.cfi_escape 0x05, 0x0f, 0x06		# DW_CFA_offset_extended r15, c-48
	nop
	.cfi_escape 0x06, 0x03			# DW_CFA_restore_extended rbx
	nop
	.cfi_escape 0x10, 0x0f, 0x02, 0x76, 0x10	# DW_CFA_expression r15, DW_OP_breg6 16
	nop
	.cfi_escape 0x16, 0x0c, 0x02, 0x76, 0x08	# DW_CFA_val_expression r12, DW_OP_breg6 8
	nop
	.cfi_escape 0x14, 0x03, 0x02		# DW_CFA_val_offset rbx, v-16
	nop
	.cfi_escape 0x0f, 0x03, 0x76, 0x10, 0x06	# DW_CFA_def_cfa_expression DW_OP_breg6 16; DW_OP_deref
	nop
	.cfi_escape 0x0c, 0x06, 0x10		# DW_CFA_def_cfa rbp, 16
	nop
	.cfi_escape 0x0e, 0x20			# DW_CFA_def_cfa_offset 32
	nop
	.cfi_escape 0x00			# DW_CFA_nop
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	cfi_forms, .-cfi_forms

# A signal frame with a personality routine reached through an indirect
# pointer and a language-specific data area: augmentation "zPLRS".
	.globl	cfi_signal
	.type	cfi_signal, @function
cfi_signal:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_personality 0x9b, cfi_personality_ref
	.cfi_lsda 0x1b, cfi_lsda
	sub	$24, %rsp
	.cfi_def_cfa_offset 32
	add	$24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	cfi_signal, .-cfi_signal

	.globl	cfi_personality
	.type	cfi_personality, @function
cfi_personality:
	ret
	.size	cfi_personality, .-cfi_personality

	.section .data.rel.local,"aw"
	.align	8
cfi_personality_ref:
	.quad	cfi_personality
	.section .rodata
cfi_lsda:
	.byte	0xff, 0xff, 0x01, 0x00
	.section .note.GNU-stack,"",@progbits
