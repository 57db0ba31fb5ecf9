{{/* Names and labels shared by every template. */}}
{{- define "hookbase.fullname" -}}
{{- if contains "hookbase" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-hookbase" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hookbase.labels" -}}
app.kubernetes.io/name: hookbase
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: call with (dict "root" $ "component" $name). */}}
{{- define "hookbase.selector" -}}
app.kubernetes.io/name: hookbase
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "hookbase.httpServices" -}}ingest api{{- end -}}

{{- define "hookbase.databaseSecret" -}}
{{- .Values.database.existingSecret | default (printf "%s-database" (include "hookbase.fullname" .)) -}}
{{- end -}}
{{- define "hookbase.adminSecret" -}}
{{- .Values.admin.existingSecret | default (printf "%s-admin" (include "hookbase.fullname" .)) -}}
{{- end -}}
{{- define "hookbase.credentialsSecret" -}}
{{- .Values.credentials.existingSecret | default (printf "%s-credentials" (include "hookbase.fullname" .)) -}}
{{- end -}}

{{/* The settings every container gets: the ConfigMap, then the three secrets. */}}
{{- define "hookbase.envFrom" -}}
- configMapRef: { name: {{ include "hookbase.fullname" . }}-settings }
{{- end -}}
{{- define "hookbase.secretEnv" -}}
- name: DATABASE_URL
  valueFrom: { secretKeyRef: { name: {{ include "hookbase.databaseSecret" . }}, key: DATABASE_URL } }
- name: HOOKBASE_ADMIN_TOKEN
  valueFrom: { secretKeyRef: { name: {{ include "hookbase.adminSecret" . }}, key: HOOKBASE_ADMIN_TOKEN } }
- name: HOOKBASE_CREDENTIALS_KEY
  valueFrom: { secretKeyRef: { name: {{ include "hookbase.credentialsSecret" . }}, key: HOOKBASE_CREDENTIALS_KEY } }
{{- end -}}

{{- define "hookbase.image" -}}
"{{ .Values.image.repository }}:{{ .Values.image.tag }}"
{{- end -}}

{{/* Hook annotations for what the install Job needs before the release's other resources exist. */}}
{{- define "hookbase.preInstallHook" -}}
helm.sh/hook: pre-install,pre-upgrade
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation
{{- end -}}

{{/* A memory quantity (512Mi, 1Gi, 600M, 536870912) in MiB; nothing when absent or in another form. */}}
{{- define "hookbase.memoryMiB" -}}
{{- $quantity := toString . -}}
{{- $mib := dict "" (divf 1.0 1048576) "k" (divf 1000.0 1048576) "M" (divf 1000000.0 1048576) "G" (divf 1000000000.0 1048576) "T" (divf 1000000000000.0 1048576) "Ki" (divf 1.0 1024) "Mi" 1.0 "Gi" 1024.0 "Ti" 1048576.0 -}}
{{- if regexMatch "^[0-9]+(\\.[0-9]+)?(k|M|G|T|Ki|Mi|Gi|Ti)?$" $quantity -}}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $quantity -}}
{{- mulf (float64 $number) (index $mib (trimPrefix $number $quantity)) -}}
{{- end -}}
{{- end -}}
