/*
 * core-shim/core-setting.h: option type ids and the settings store API
 * (stress-ng core-setting.h)
 */
#ifndef CORE_SETTING_H
#define CORE_SETTING_H

typedef enum {
	TYPE_ID_UNDEFINED = 0,
	TYPE_ID_UINT8,
	TYPE_ID_INT8,
	TYPE_ID_UINT16,
	TYPE_ID_INT16,
	TYPE_ID_UINT32,
	TYPE_ID_UINT32_TIME,
	TYPE_ID_INT32,
	TYPE_ID_INT32_TIME,
	TYPE_ID_INT32_CPU_PERCENT,
	TYPE_ID_UINT64,
	TYPE_ID_UINT64_BYTES,
	TYPE_ID_UINT64_BYTES_FS,
	TYPE_ID_UINT64_BYTES_FS_PERCENT,
	TYPE_ID_UINT64_BYTES_VM,
	TYPE_ID_UINT64_TIME,
	TYPE_ID_INT64,
	TYPE_ID_SIZE_T,
	TYPE_ID_SIZE_T_BYTES,
	TYPE_ID_SIZE_T_BYTES_FS,
	TYPE_ID_SIZE_T_BYTES_FS_PERCENT,
	TYPE_ID_SIZE_T_BYTES_VM,
	TYPE_ID_SSIZE_T,
	TYPE_ID_UINT,
	TYPE_ID_INT,
	TYPE_ID_INT_DOMAIN,
	TYPE_ID_INT_PORT,
	TYPE_ID_OFF_T,
	TYPE_ID_STR,
	TYPE_ID_BOOL,
	TYPE_ID_SIZE_T_METHOD,
	TYPE_ID_CALLBACK,
} stress_type_id_t;

extern int stress_setting_set(const char *stressor_name, const char *name,
	const stress_type_id_t type_id, const void *value);
extern bool stress_setting_get(const char *name, void *value);
extern void stress_settings_free(void);

#endif
