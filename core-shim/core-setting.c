/*
 * Copyright (C) 2026 stress-ksm-unmerge authors
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU General Public License
 * as published by the Free Software Foundation; either version 2
 * of the License, or (at your option) any later version.
 *
 * core-shim/core-setting.c: the option settings store
 * (stress_setting_set/get), keyed by option name.
 */
#include "stress-ng.h"

typedef union {
	uint8_t		uint8;
	int8_t		int8;
	uint16_t	uint16;
	int16_t		int16;
	uint32_t	uint32;
	int32_t		int32;
	uint64_t	uint64;
	int64_t		int64;
	size_t		size;
	ssize_t		ssize;
	unsigned int	uint;
	int		sint;
	off_t		off;
	char		*str;
	bool		boolean;
} stress_setting_value_t;

typedef struct stress_setting {
	struct stress_setting *next;	/* next in list */
	char *name;			/* option name, e.g. "timeout" */
	stress_type_id_t type_id;	/* value type */
	stress_setting_value_t u;	/* value */
} stress_setting_t;

static stress_setting_t *setting_head;

/*
 *  stress_setting_size()
 *	size in bytes of the native type for type_id, 0 if unknown
 */
static size_t stress_setting_size(const stress_type_id_t type_id)
{
	switch (type_id) {
	case TYPE_ID_UINT8:
	case TYPE_ID_INT8:
		return 1;
	case TYPE_ID_UINT16:
	case TYPE_ID_INT16:
		return 2;
	case TYPE_ID_UINT32:
	case TYPE_ID_UINT32_TIME:
	case TYPE_ID_INT32:
	case TYPE_ID_INT32_TIME:
	case TYPE_ID_INT32_CPU_PERCENT:
		return 4;
	case TYPE_ID_UINT64:
	case TYPE_ID_UINT64_BYTES:
	case TYPE_ID_UINT64_BYTES_FS:
	case TYPE_ID_UINT64_BYTES_FS_PERCENT:
	case TYPE_ID_UINT64_BYTES_VM:
	case TYPE_ID_UINT64_TIME:
	case TYPE_ID_INT64:
		return 8;
	case TYPE_ID_SIZE_T:
	case TYPE_ID_SIZE_T_BYTES:
	case TYPE_ID_SIZE_T_BYTES_FS:
	case TYPE_ID_SIZE_T_BYTES_FS_PERCENT:
	case TYPE_ID_SIZE_T_BYTES_VM:
	case TYPE_ID_SIZE_T_METHOD:
		return sizeof(size_t);
	case TYPE_ID_SSIZE_T:
		return sizeof(ssize_t);
	case TYPE_ID_UINT:
		return sizeof(unsigned int);
	case TYPE_ID_INT:
	case TYPE_ID_INT_DOMAIN:
	case TYPE_ID_INT_PORT:
		return sizeof(int);
	case TYPE_ID_OFF_T:
		return sizeof(off_t);
	case TYPE_ID_STR:
		return sizeof(char *);
	case TYPE_ID_BOOL:
		return sizeof(bool);
	case TYPE_ID_CALLBACK:
	case TYPE_ID_UNDEFINED:
	default:
		return 0;
	}
}

/*
 *  stress_setting_find()
 *	find a setting by name
 */
static stress_setting_t *stress_setting_find(const char *name)
{
	stress_setting_t *s;

	for (s = setting_head; s; s = s->next) {
		if (strcmp(s->name, name) == 0)
			return s;
	}
	return NULL;
}

/*
 *  stress_setting_set()
 *	store a value for option name; a later set replaces it.  For
 *	TYPE_ID_STR value is the string itself.  Returns 0 or -1.
 */
int stress_setting_set(const char *stressor_name, const char *name,
	const stress_type_id_t type_id, const void *value)
{
	stress_setting_t *s;
	const size_t size = stress_setting_size(type_id);

	(void)stressor_name;
	if (!name || !value || !size)
		return -1;

	s = stress_setting_find(name);
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			goto nomem;
		s->name = strdup(name);
		if (!s->name) {
			free(s);
			goto nomem;
		}
		s->next = setting_head;
		setting_head = s;
	} else if (s->type_id == TYPE_ID_STR) {
		free(s->u.str);
		s->u.str = NULL;
	}
	s->type_id = type_id;
	if (type_id == TYPE_ID_STR) {
		s->u.str = strdup((const char *)value);
		if (!s->u.str)
			goto nomem;
	} else {
		(void)memcpy(&s->u, value, size);
	}
	return 0;
nomem:
	(void)fprintf(stderr, "cannot allocate setting '%s', errno=%d (%s)\n",
		name, errno, strerror(errno));
	return -1;
}

/*
 *  stress_setting_get()
 *	copy the value of option name into *value; false if not set.
 *	For TYPE_ID_STR *value is a char * owned by the store.
 */
bool stress_setting_get(const char *name, void *value)
{
	const stress_setting_t *s;

	if (!name || !value)
		return false;
	s = stress_setting_find(name);
	if (!s)
		return false;
	(void)memcpy(value, &s->u, stress_setting_size(s->type_id));
	return true;
}

/*
 *  stress_setting_is_set()
 *	true if option name has a stored value
 */
bool stress_setting_is_set(const char *name)
{
	return name && stress_setting_find(name);
}

/*
 *  stress_settings_free()
 *	free all settings
 */
void stress_settings_free(void)
{
	stress_setting_t *s = setting_head;

	while (s) {
		stress_setting_t *next = s->next;

		if (s->type_id == TYPE_ID_STR)
			free(s->u.str);
		free(s->name);
		free(s);
		s = next;
	}
	setting_head = NULL;
}
