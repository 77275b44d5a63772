{{/* A component's image: k8shazgpu.image "controller" . */}}
{{- define "k8shazgpu.image" -}}
{{- $c := index . 0 -}}
{{- $i := (index . 1).Values.images -}}
{{- if $i.registry }}{{ $i.registry }}/{{ end }}{{ $i.repository }}/{{ $c }}
{{- with index $i.digests $c }}@{{ . }}{{ else }}:{{ $i.tag }}{{ end -}}
{{- end -}}

{{/* The pod spec's placement on GPU nodes, as the DaemonSets have it. */}}
{{- define "k8shazgpu.gpunode" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 0 }}
{{- end }}
{{- with .Values.runtimeClassName }}
runtimeClassName: {{ . }}
{{- end }}
{{- end -}}
