{{/* The name every object of the release shares. */}}
{{- define "readygate-webhook.name" -}}
{{- printf "%s" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels every object carries; the selector's subset. */}}
{{- define "readygate-webhook.selector" -}}
app.kubernetes.io/name: readygate-webhook
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "readygate-webhook.labels" -}}
{{ include "readygate-webhook.selector" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The image, by digest when one is given. */}}
{{- define "readygate-webhook.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The Secret holding the serving certificate. */}}
{{- define "readygate-webhook.secret" -}}
{{- if eq .Values.certificate.source "secret" -}}
{{ required "certificate.secretName is required with certificate.source=secret" .Values.certificate.secretName }}
{{- else -}}
{{ include "readygate-webhook.name" . }}-tls
{{- end -}}
{{- end -}}

{{/* The Service's DNS names, which the certificate must hold. */}}
{{- define "readygate-webhook.dnsNames" -}}
- {{ include "readygate-webhook.name" . }}.{{ .Release.Namespace }}.svc
- {{ include "readygate-webhook.name" . }}.{{ .Release.Namespace }}.svc.cluster.local
{{- end -}}
